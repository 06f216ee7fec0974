# sml_test(NAME SOURCES src... LABELS l... [GPU] [ARGS a...] [TIMEOUT s])
# A test is a small C executable: exit 0 pass, 77 skip, anything else fail. GPU tests are
# labelled `gpu`, ask ctest for one GPU slot (RESOURCE_GROUPS) so `ctest -j
# --resource-spec-file` spreads them over a host's GPUs, and exit 77 with no device.
function(sml_test name)
  cmake_parse_arguments(T "GPU" "TIMEOUT" "SOURCES;LABELS;ARGS;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE sml sml_test_support ${T_LIBS})
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  if(T_GPU)
    set(where gpu)
  else()
    set(where cpu)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS "${T_LABELS};${where}"
                                          TIMEOUT ${T_TIMEOUT}
                                          WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  if(T_GPU)
    set_tests_properties(${name} PROPERTIES RESOURCE_GROUPS "gpus:1")
  endif()
endfunction()
