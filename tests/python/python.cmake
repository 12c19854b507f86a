# The Python package's tests (tests/python, pytest) against the package this
# build lays out in ${build}/python/orchid (python/CMakeLists.txt), not an
# installed copy.
if(TARGET _orchid)
  orchid_python_test(NAME python_package NEEDS "pytest numpy onnx onnxruntime"
                     COMMAND -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/python)
  set_tests_properties(python_package PROPERTIES ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python"
                       LABELS python)
endif()
