# softmax_lab_add_gate: ctest tests that gate kernels of a plugin (softmax_lab_plugin.h) the
# way softmax-lab gates its own, through the softmax-lab executable and `--load`.
#
#   softmax_lab_add_gate(NAME <name> PLUGIN <target> KERNELS <kernel>...
#                        [DEVICE cpu|gpu] [CLAIM "<x> over <baseline> on <shapes>"]
#                        [CASES <n>] [SWEEP <sweep>] [SHARDS <n>] [CASE_TIMEOUT <seconds>]
#                        [STRICT])
#
# For each kernel K of the shared-library target <target>:
#   <name>.K.properties   softmax-lab check --load <plugin> --kernel K: the property suite
#                         with shrinking and saved reproducers (under <build>/<name>-failures),
#                         the CPU budget for a CPU kernel, the GPU budget for a GPU kernel
#                         (CASES: cases per op and dtype instead)        labels property;<device>
#   with SHARDS n (n >= 2) the property suite is split into n slices of its cases instead:
#   <name>.K.properties.shard-<i>  check --shard i/n --json <build>/<name>-shards/K.<i>.json,
#                         i = 1..n: each asks ctest for its own GPU, so `ctest -j n
#                         --resource-spec-file` runs them on n GPUs at once
#   <name>.K.properties.merge  softmax-lab merge of the n results (the shards run first: a
#                         ctest fixture): the verdict, counts and case digest of the
#                         unsharded suite, in <build>/<name>-shards/K.json and K.md
#   <name>.K.edge_shapes  (DEVICE gpu) the edge-shape test of softmax-lab's own GPU kernels:
#                         every row length that matters, strides, offsets, in place, past
#                         2^31 elements; canaries and poison                  labels unit;gpu
#   <name>.K.sanitize     (DEVICE gpu) softmax-lab check --sanitize memcheck,racecheck,
#                         synccheck,initcheck: K's first cases under compute-sanitizer; a
#                         hazard fails it; skipped (77) without compute-sanitizer
#                                                                       labels sanitize;gpu
#   <name>.K.perf         (with CLAIM) softmax-lab bench --backend K --gate on SWEEP (default
#                         standard): K must be Supported on its claim; ledger under
#                         <build>/<name>-ledger                        labels perf;<device>
# CASE_TIMEOUT sets the seconds a kernel call may take before it is a suspect (the properties,
# the edge shapes and the sanitizer run): past it the call runs again alone under ten times
# it, and only a call that does not finish there fails as a hang; a slow call that finishes is
# judged like any other. The default is derived from each call's size (at least 4 s).
# A kernel whose table line declares a deviation from the numerics contract (sml_kernel.deviation)
# is held to it as a looser bound, never excused by it: each test prints the declaration, and
# the property suite's and edge shapes' verdicts say "within its declared deviation: <terms>";
# a miss outside it fails. STRICT holds the kernels to the contract itself (check and the edge
# shapes with --strict): a declared deviation then fails the gate.
# DEVICE (default gpu) and CLAIM (default: none) are checked against the kernel's table line
# before each test runs, so a gate never passes a kernel it does not describe. CLAIM reads
# like the table's sml_claim: "1.2x over cudnn on long" is {"cudnn", 1.2, "long"}. Tests of a
# GPU kernel exit 77 (skipped) where no GPU exists and ask ctest for one GPU (RESOURCE_GROUPS
# gpus:1).
set(_SML_GATE_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/softmax_lab_gate.sh)

# The SHARDS form of <name>.K.properties: n slices, then their merge; sets `tests` in the caller.
function(_softmax_lab_gate_shards run check t k name n device cli)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name}-shards)
  file(MAKE_DIRECTORY ${dir})
  set(files "")
  set(shard_tests "")
  foreach(i RANGE 1 ${n})
    add_test(NAME ${t}.properties.shard-${i}
             COMMAND ${run} ${check} --shard ${i}/${n} --json ${dir}/${k}.${i}.json)
    list(APPEND files ${dir}/${k}.${i}.json)
    list(APPEND shard_tests ${t}.properties.shard-${i})
  endforeach()
  set_tests_properties(${shard_tests} PROPERTIES FIXTURES_SETUP ${t}.shards)
  add_test(NAME ${t}.properties.merge
           COMMAND ${run} ${cli} merge ${files} --json ${dir}/${k}.json --md ${dir}/${k}.md)
  set_tests_properties(${t}.properties.merge PROPERTIES FIXTURES_REQUIRED ${t}.shards)
  set_tests_properties(${shard_tests} ${t}.properties.merge PROPERTIES LABELS "property;${device}" TIMEOUT 900)
  set(tests ${shard_tests} ${t}.properties.merge PARENT_SCOPE)
endfunction()

function(softmax_lab_add_gate)
  cmake_parse_arguments(G "STRICT" "NAME;PLUGIN;DEVICE;CLAIM;CASES;SWEEP;SHARDS;CASE_TIMEOUT"
                        "KERNELS" ${ARGN})
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "softmax_lab_add_gate: unknown arguments: ${G_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT G_NAME OR NOT G_PLUGIN OR NOT G_KERNELS)
    message(FATAL_ERROR "softmax_lab_add_gate: NAME, PLUGIN and KERNELS are required")
  endif()
  if(NOT TARGET ${G_PLUGIN})
    message(FATAL_ERROR "softmax_lab_add_gate(${G_NAME}): PLUGIN ${G_PLUGIN} is not a target")
  endif()
  if(NOT G_DEVICE)
    set(G_DEVICE gpu)
  endif()
  if(NOT G_DEVICE MATCHES "^(cpu|gpu)$")
    message(FATAL_ERROR "softmax_lab_add_gate(${G_NAME}): DEVICE is cpu or gpu, not '${G_DEVICE}'")
  endif()
  if(DEFINED G_CASES AND NOT G_CASES MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "softmax_lab_add_gate(${G_NAME}): CASES is a positive count, not '${G_CASES}'")
  endif()
  if(DEFINED G_SHARDS AND NOT G_SHARDS MATCHES "^([2-9]|[1-9][0-9]+)$")
    message(FATAL_ERROR "softmax_lab_add_gate(${G_NAME}): SHARDS is a count of at least 2, not '${G_SHARDS}'")
  endif()
  if(DEFINED G_CASE_TIMEOUT AND NOT G_CASE_TIMEOUT MATCHES "^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)$")
    message(FATAL_ERROR "softmax_lab_add_gate(${G_NAME}): CASE_TIMEOUT is a number of seconds, not '${G_CASE_TIMEOUT}'")
  endif()
  set(timeout "")
  if(G_CASE_TIMEOUT)
    set(timeout --case-timeout ${G_CASE_TIMEOUT})
  endif()
  if(NOT G_SWEEP)
    set(G_SWEEP standard)
  endif()
  set(claim none) # as `softmax-lab list` prints a kernel without a claim
  if(DEFINED G_CLAIM)
    if(NOT G_CLAIM MATCHES "^([0-9]+(\\.[0-9]+)?)x over ([A-Za-z0-9_.-]+) on (all|short|mid|long)$")
      message(FATAL_ERROR "softmax_lab_add_gate(${G_NAME}): CLAIM reads \"<x> over <baseline> on "
                          "all|short|mid|long\" (e.g. \"1.2x over cudnn on long\"), not '${G_CLAIM}'")
    endif()
    # As `softmax-lab list` prints a claim: ">=1.20x cudnn (long)".
    set(x ${CMAKE_MATCH_1})
    set(baseline ${CMAKE_MATCH_3})
    set(shapes ${CMAKE_MATCH_4})
    if(NOT x MATCHES "\\.")
      set(x "${x}.00")
    elseif(x MATCHES "\\.[0-9]$")
      set(x "${x}0")
    elseif(NOT x MATCHES "\\.[0-9][0-9]$")
      message(FATAL_ERROR "softmax_lab_add_gate(${G_NAME}): CLAIM's speedup has at most two decimals: '${G_CLAIM}'")
    endif()
    set(claim ">=${x}x ${baseline} (${shapes})")
  endif()

  set(cli $<TARGET_FILE:softmax_lab::cli>)
  set(plugin $<TARGET_FILE:${G_PLUGIN}>)
  set(cases "")
  if(G_CASES)
    set(cases --cases ${G_CASES})
  endif()
  set(strict "")
  if(G_STRICT)
    set(strict --strict)
  endif()
  foreach(k IN LISTS G_KERNELS)
    set(run sh ${_SML_GATE_SCRIPT} ${cli} ${plugin} ${k} ${G_DEVICE} "${claim}" --)
    set(t ${G_NAME}.${k})
    set(check ${cli} check --load ${plugin} --kernel ${k} ${cases} ${timeout} ${strict}
              --save ${CMAKE_CURRENT_BINARY_DIR}/${G_NAME}-failures)
    if(G_SHARDS)
      _softmax_lab_gate_shards("${run}" "${check}" ${t} ${k} ${G_NAME} ${G_SHARDS} ${G_DEVICE} ${cli})
    else()
      add_test(NAME ${t}.properties COMMAND ${run} ${check})
      set_tests_properties(${t}.properties PROPERTIES LABELS "property;${G_DEVICE}" TIMEOUT 900)
      set(tests ${t}.properties)
    endif()
    if(G_DEVICE STREQUAL "gpu")
      add_test(NAME ${t}.edge_shapes
               COMMAND ${run} $<TARGET_FILE:softmax_lab::edge_shapes> --load ${plugin} --kernel ${k}
                       ${timeout} ${strict})
      set_tests_properties(${t}.edge_shapes PROPERTIES LABELS "unit;gpu" TIMEOUT 900)
      list(APPEND tests ${t}.edge_shapes)
      add_test(NAME ${t}.sanitize
               COMMAND ${run} ${cli} check --load ${plugin} --kernel ${k} ${timeout} ${strict}
                       --sanitize memcheck,racecheck,synccheck,initcheck)
      set_tests_properties(${t}.sanitize PROPERTIES LABELS "sanitize;gpu" TIMEOUT 1800)
      list(APPEND tests ${t}.sanitize)
    endif()
    if(DEFINED G_CLAIM)
      add_test(NAME ${t}.perf
               COMMAND ${run} ${cli} bench --load ${plugin} --backend ${k} --sweep ${G_SWEEP} --gate
                       --ledger ${CMAKE_CURRENT_BINARY_DIR}/${G_NAME}-ledger)
      set_tests_properties(${t}.perf PROPERTIES LABELS "perf;${G_DEVICE}" TIMEOUT 900)
      list(APPEND tests ${t}.perf)
    endif()
    set_tests_properties(${tests} PROPERTIES SKIP_RETURN_CODE 77
                                             WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    if(G_DEVICE STREQUAL "gpu")
      set_tests_properties(${tests} PROPERTIES RESOURCE_GROUPS "gpus:1")
    endif()
  endforeach()
endfunction()
