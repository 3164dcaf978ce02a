# cmake -DNM=nm -DOBJECTS="a.o|b.o" -P check_symbols.cmake
#
# Fails when an ISA level's object (built from isa/gemm_level.cc in the
# folder kiln_kernels_<level>.dir) defines a global or weak symbol whose name
# does not carry the level (isa_<level> or kiln_eigen_<level>): the linker
# would merge such a symbol with another level's copy, and one level's code
# would run at another's ISA. DW.ref.* are exempt: each is a data word
# holding the address of the C++ exception personality routine, the same in
# every object.
string(REPLACE "|" ";" objects "${OBJECTS}")
list(LENGTH objects count)
if(count EQUAL 0)
  message(FATAL_ERROR "no ISA level objects given")
endif()
set(failures "")
foreach(object IN LISTS objects)
  if(NOT object MATCHES "kiln_kernels_([a-z0-9]+)\\.dir")
    message(FATAL_ERROR "cannot tell the ISA level of ${object}")
  endif()
  set(level ${CMAKE_MATCH_1})
  execute_process(COMMAND ${NM} --defined-only --extern-only --format=posix ${object}
                  OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(checked 0)
  foreach(line IN LISTS lines)
    if(line STREQUAL "")
      continue()
    endif()
    string(REGEX REPLACE " .*" "" symbol "${line}")
    math(EXPR checked "${checked} + 1")
    if(NOT symbol MATCHES "isa_${level}|kiln_eigen_${level}" AND NOT symbol MATCHES "^DW\\.ref\\.")
      string(APPEND failures "  ${level}: ${symbol}\n")
    endif()
  endforeach()
  if(checked EQUAL 0)
    message(FATAL_ERROR "${object} defines no global symbols: wrong object?")
  endif()
  message(STATUS "${level}: ${checked} global symbols, checked")
endforeach()
if(failures)
  message(FATAL_ERROR "ISA level objects define symbols another level could share:\n${failures}")
endif()
