# Runs one Python test with the project's .venv interpreter (cmake -P), after
# checking that it exists and imports what the test needs, so that a missing
# prerequisite is a failing test that says what to do, never a skipped or
# vanished one. Registered through orchid_python_test (tests/CMakeLists.txt):
#   cmake -DPYTHON=<python> -DNEEDS="onnx numpy" -DTEST=<name> -P run_python_test.cmake -- SCRIPT ARGS...
cmake_minimum_required(VERSION 3.20)

set(script_args "")
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  if(after_separator)
    list(APPEND script_args "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()

set(setup_hint "run scripts/setup: it creates .venv and installs them (scripts/requirements.txt)")
if(NOT EXISTS "${PYTHON}")
  message(FATAL_ERROR "${TEST}: ${PYTHON} not found; the test needs a Python with ${NEEDS}: ${setup_hint}")
endif()
# A module must have a file: Debian's libonnx-testdata leaves an empty onnx/
# folder that imports as a namespace package without one.
string(REPLACE " " ";" modules "${NEEDS}")
foreach(module ${modules})
  execute_process(COMMAND "${PYTHON}" -c "import ${module}, sys; sys.exit(${module}.__file__ is None)"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE import_error)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TEST}: ${PYTHON} cannot import ${module}: ${setup_hint}\n${import_error}")
  endif()
endforeach()

execute_process(COMMAND "${PYTHON}" ${script_args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST}: exit status ${rc}")
endif()
