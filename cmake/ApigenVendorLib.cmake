# apigen_find_vendor_lib: a CUDA library NVIDIA ships beside the toolkit or
# in a PyPI wheel (cuDNN, NCCL), as the imported target apigen::<NAME>.
#
#   apigen_find_vendor_lib(
#     NAME nccl                             # apigen::nccl; the variables below are APIGEN_NCCL_*
#     TITLE "NCCL 2"                        # for messages
#     HEADER nccl.h                         # in ROOT/include or the toolkit's include folders
#     LIBRARY libnccl.so.2 nccl             # names, in ROOT/lib(64) or the toolkit's lib folders
#     VERSION_FILE nccl.h                   # a header beside HEADER whose line that matches
#     VERSION_LINE "^#define NCCL_MAJOR "   # VERSION_LINE must also match VERSION_MATCH
#     VERSION_MATCH "NCCL_MAJOR 2$"
#     RESULT _found)                        # TRUE when found; else the reason was printed
#
# Sets (cache): APIGEN_<NAME>_ROOT (the user's: a wheel's nvidia/<name> folder),
# APIGEN_<NAME>_INCLUDE_DIR, APIGEN_<NAME>_LIBRARY, APIGEN_<NAME>_LIB_DIR.
include_guard(GLOBAL)

function(apigen_find_vendor_lib)
  cmake_parse_arguments(A "" "NAME;TITLE;HEADER;VERSION_FILE;VERSION_LINE;VERSION_MATCH;RESULT"
                        "LIBRARY" ${ARGN})
  string(TOUPPER ${A_NAME} _up)
  set(${A_RESULT} FALSE PARENT_SCOPE)
  list(GET A_LIBRARY 0 _file)
  set(APIGEN_${_up}_ROOT "" CACHE PATH
      "folder with include/${A_HEADER} and lib/${_file} (default: the CUDA toolkit's)")
  set(_root ${APIGEN_${_up}_ROOT})
  find_path(APIGEN_${_up}_INCLUDE_DIR ${A_HEADER}
    HINTS ${_root}/include ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
  find_library(APIGEN_${_up}_LIBRARY NAMES ${A_LIBRARY}
    HINTS ${_root}/lib ${_root}/lib64 ${CUDAToolkit_LIBRARY_DIR}
          ${CUDAToolkit_LIBRARY_ROOT}/lib ${CUDAToolkit_LIBRARY_ROOT}/lib64 NO_DEFAULT_PATH)
  set(_inc ${APIGEN_${_up}_INCLUDE_DIR})
  set(_lib ${APIGEN_${_up}_LIBRARY})
  if(NOT _inc OR NOT _lib)
    message(STATUS "${A_TITLE} not found (set APIGEN_${_up}_ROOT): the ${A_NAME} stub, server and examples are not built")
    return()
  endif()
  file(STRINGS ${_inc}/${A_VERSION_FILE} _line REGEX "${A_VERSION_LINE}")
  if(NOT _line MATCHES "${A_VERSION_MATCH}")
    message(STATUS "${A_NAME} at ${_inc} is not ${A_TITLE}: not built")
    return()
  endif()
  if(NOT TARGET apigen::${A_NAME})
    add_library(apigen::${A_NAME} SHARED IMPORTED GLOBAL)
    set_target_properties(apigen::${A_NAME} PROPERTIES IMPORTED_LOCATION ${_lib}
                          IMPORTED_NO_SONAME OFF INTERFACE_INCLUDE_DIRECTORIES ${_inc})
  endif()
  get_filename_component(_dir ${_lib} DIRECTORY)
  set(APIGEN_${_up}_LIB_DIR ${_dir} CACHE INTERNAL "the real ${A_NAME}'s folder")
  set(${A_RESULT} TRUE PARENT_SCOPE)
endfunction()
