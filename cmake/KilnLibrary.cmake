# kiln_library(NAME name [DEPS lib...] [TEST_DEPS lib...] [TEST_COST seconds])
#
# One static library per folder: every *.cc in the calling folder except
# *_test.cc. The *_test.cc files form `${name}_tests`, registered with ctest
# through gtest_discover_tests; they see KILN_CORPUS_DIR and
# KILN_FUZZ_REGRESSIONS_DIR (fuzz/regression_inputs.h). TEST_COST is the
# ctest COST of each of its tests (see enable_testing() in CMakeLists.txt).
function(kiln_library)
  cmake_parse_arguments(KL "" "NAME;TEST_COST" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER sources EXCLUDE REGEX "_test\\.cc$")
  add_library(${KL_NAME} STATIC ${sources})
  target_include_directories(${KL_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${KL_NAME} PUBLIC ${KL_DEPS})
  kiln_layer(${KL_NAME})

  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  if(tests)
    add_executable(${KL_NAME}_tests ${tests})
    target_link_libraries(${KL_NAME}_tests PRIVATE ${KL_NAME} ${KL_TEST_DEPS} GTest::gtest_main GTest::gmock)
    target_compile_options(${KL_NAME}_tests PRIVATE ${KILN_TEST_CODE_OPTIONS})
    target_compile_definitions(${KL_NAME}_tests PRIVATE KILN_CORPUS_DIR="${KILN_CORPUS_DIR}"
                               KILN_FUZZ_REGRESSIONS_DIR="${PROJECT_SOURCE_DIR}/fuzz/regressions")
    include(GoogleTest)
    set(properties "")
    if(KL_TEST_COST)
      set(properties PROPERTIES COST ${KL_TEST_COST})
    endif()
    gtest_discover_tests(${KL_NAME}_tests DISCOVERY_TIMEOUT 120 ${properties})
  endif()
endfunction()

# kiln_optimized_test_sources(file...): test files of the calling folder
# whose own code carries the run (the corpus walks compare every value they
# compute) stay at the sanitizer build's -O1, where other test code is
# compiled at -O0 (KILN_TEST_CODE_OPTIONS). Release test code is -O1 anyway.
# Such files compile alone in a unity build.
function(kiln_optimized_test_sources)
  if(KILN_SANITIZE)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS -O1)
  endif()
endfunction()
