# The registry completeness test: CMake lists every kernel source so the test can insist
# that each has a registry line. Included from tests/unit/CMakeLists.txt.
file(GLOB _sml_gpu_kernels RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/kernels/softmax_*.cu)
file(GLOB _sml_cpu_kernels RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/kernels/cpu_*.c)
list(JOIN _sml_gpu_kernels "," _a)
list(JOIN _sml_cpu_kernels "," _b)
sml_test(test_registry SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_registry.c LABELS unit)
target_compile_definitions(test_registry PRIVATE "SML_KERNEL_FILES=\"${_a},${_b}\"")
