# `cmake --install BUILD --prefix P`: the two shared libraries, the public headers, the
# softmax-lab executable and the edge-shape tool, a CMake package (find_package(softmax_lab):
# softmax_lab::softmax_lab, softmax_lab::cli_library, softmax_lab::cli, softmax_lab_add_gate)
# and a pkg-config file. Everything is found relative to P, so the prefix can move.
include(CMakePackageConfigHelpers)
set(SML_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/softmax_lab)

# The CUDA runtime and cuDNN are found where the build found them (RUNPATH), so a consumer
# links libsoftmax_lab alone, also where they are not in the loader's paths.
set(_sml_rpath "")
if(SML_HAVE_CUDA)
  list(APPEND _sml_rpath ${CUDAToolkit_LIBRARY_DIR})
endif()
if(SML_HAVE_CUDNN)
  get_filename_component(_sml_cudnn_dir ${CUDNN_LIBRARY} DIRECTORY)
  list(APPEND _sml_rpath ${_sml_cudnn_dir})
endif()
list(REMOVE_DUPLICATES _sml_rpath)
set_target_properties(softmax_lab PROPERTIES INSTALL_RPATH "${_sml_rpath}" INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(softmax_lab_cli PROPERTIES EXPORT_NAME cli_library)
set_target_properties(softmax-lab PROPERTIES EXPORT_NAME cli)
set_target_properties(softmax-lab-edge-shapes PROPERTIES EXPORT_NAME edge_shapes)
install(TARGETS softmax_lab softmax_lab_cli softmax-lab softmax-lab-edge-shapes EXPORT softmax_lab_targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/plans/ DESTINATION ${CMAKE_INSTALL_DATADIR}/softmax_lab/plans
        FILES_MATCHING PATTERN "*.plans")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ ${PROJECT_BINARY_DIR}/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(EXPORT softmax_lab_targets NAMESPACE softmax_lab:: FILE softmax_labTargets.cmake
        DESTINATION ${SML_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/softmax_labConfig.cmake.in
  ${PROJECT_BINARY_DIR}/softmax_labConfig.cmake INSTALL_DESTINATION ${SML_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/softmax_labConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/softmax_labConfig.cmake
              ${PROJECT_BINARY_DIR}/softmax_labConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/SoftmaxLabGate.cmake
        DESTINATION ${SML_INSTALL_CMAKEDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/cmake/softmax_lab_gate.sh DESTINATION ${SML_INSTALL_CMAKEDIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/softmax_lab.pc.in ${PROJECT_BINARY_DIR}/softmax_lab.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/softmax_lab.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
