# apigen_add_api: build the remoting layer of one API from its committed
# generated sources (generated/<api>/), so that a guest needs no libclang.
#
#   apigen_add_api(
#     NAME exa                              # the spec's api.name
#     SPEC specs/exa.yaml                   # for regen-<name>
#     GENERATED generated/exa               # apigen's output folder (committed)
#     SONAME libexa.so.1                    # file name and DT_SONAME of the stub
#     REAL_LIBS exa                         # the real library (targets or files) the server calls
#     SOURCES specs/exa/local.c             # hand-written guest C (local / custom guest functions)
#     [HOST_SOURCES specs/x/host.c]         # hand-written host C (custom host functions)
#     [INCLUDE_DIRS dir...]                 # where the API's headers are, if REAL_LIBS do not say
#     [GEN_INCLUDE_DIRS dir...]             # -I folders for apigen in regen-<name> (vendor headers)
#     [STUB_DIR dir])                       # where the stub goes (default: <build>/stub)
#
# Makes:
#   <name>_stub               shared library STUB_DIR/<SONAME>, exporting exactly the
#                             symbols of <name>.map (-fvisibility=hidden), linked with the
#                             shared guest runtime libapigen-guest.so.2 (apigen_guest_so),
#                             which is copied beside it and found there ($ORIGIN)
#   apigen-server-<name>      <name>_server.c + <name>_server_main.c + apigen_host + REAL_LIBS
#   regen-<name>              (when the apigen target exists) regenerates GENERATED from SPEC
#
# Relative paths are taken from the project's source folder.
#
# In this tree it uses the runtime targets apigen_guest_so and apigen_host
# (and apigen for regen-<name>); in a project of its own, after
# find_package(apigen), the installed apigen::guest, apigen::host and
# apigen::apigen (docs/tutorial.md).
include_guard(GLOBAL)

# apigen_lto comes from apigen's own top-level CMakeLists.txt; elsewhere the
# project's own settings decide.
if(NOT COMMAND apigen_lto)
  function(apigen_lto)
  endfunction()
endif()

# The runtime targets: this tree's, else the installed package's.
function(_apigen_runtime out_guest out_host out_gen)
  if(TARGET apigen_guest_so AND TARGET apigen_host)
    set(${out_guest} apigen_guest_so PARENT_SCOPE)
    set(${out_host} apigen_host PARENT_SCOPE)
  elseif(TARGET apigen::guest AND TARGET apigen::host)
    set(${out_guest} apigen::guest PARENT_SCOPE)
    set(${out_host} apigen::host PARENT_SCOPE)
  else()
    set(${out_guest} "" PARENT_SCOPE)
    set(${out_host} "" PARENT_SCOPE)
  endif()
  if(TARGET apigen)
    set(${out_gen} apigen PARENT_SCOPE)
  elseif(TARGET apigen::apigen)
    set(${out_gen} apigen::apigen PARENT_SCOPE)
  else()
    set(${out_gen} "" PARENT_SCOPE)
  endif()
endfunction()

function(_apigen_abs out)
  set(res "")
  foreach(p ${ARGN})
    if(IS_ABSOLUTE "${p}")
      list(APPEND res "${p}")
    else()
      list(APPEND res "${PROJECT_SOURCE_DIR}/${p}")
    endif()
  endforeach()
  set(${out} "${res}" PARENT_SCOPE)
endfunction()

function(apigen_add_api)
  cmake_parse_arguments(A "" "NAME;SPEC;GENERATED;SONAME;STUB_DIR"
                        "REAL_LIBS;SOURCES;HOST_SOURCES;INCLUDE_DIRS;GEN_INCLUDE_DIRS" ${ARGN})
  foreach(req NAME SPEC GENERATED SONAME REAL_LIBS)
    if(NOT A_${req})
      message(FATAL_ERROR "apigen_add_api: ${req} is required")
    endif()
  endforeach()
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "apigen_add_api: unknown arguments: ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT A_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "apigen_add_api: NAME '${A_NAME}' is not a C identifier")
  endif()
  _apigen_abs(spec ${A_SPEC})
  _apigen_abs(gen ${A_GENERATED})
  _apigen_abs(srcs ${A_SOURCES})
  _apigen_abs(host_srcs ${A_HOST_SOURCES})
  _apigen_abs(incs ${A_INCLUDE_DIRS})
  if(A_STUB_DIR)
    _apigen_abs(stub_dir ${A_STUB_DIR})
  else()
    set(stub_dir ${CMAKE_BINARY_DIR}/stub)
  endif()
  set(n ${A_NAME})
  _apigen_runtime(rt_guest rt_host rt_gen)

  # Regeneration needs the generator (libclang); building does not.
  # Paths relative to the source folder, as a person would type them, so
  # that whatever apigen records of them does not depend on the checkout.
  if(rt_gen)
    file(RELATIVE_PATH spec_rel ${PROJECT_SOURCE_DIR} ${spec})
    file(RELATIVE_PATH gen_rel ${PROJECT_SOURCE_DIR} ${gen})
    set(gen_i "")
    foreach(d ${A_GEN_INCLUDE_DIRS})
      list(APPEND gen_i -I ${d})
    endforeach()
    set(gen_dep "")
    if(rt_gen STREQUAL "apigen")
      set(gen_dep DEPENDS apigen)
    endif()
    add_custom_target(regen-${n}
      COMMAND $<TARGET_FILE:${rt_gen}> ${spec_rel} -o ${gen_rel} ${gen_i}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      ${gen_dep}
      COMMENT "apigen: regenerating ${gen} from ${spec}"
      VERBATIM)
  endif()

  set(stub_c ${gen}/${n}_stub.c)
  set(server_c ${gen}/${n}_server.c)
  set(server_main_c ${gen}/${n}_server_main.c)
  set(map ${gen}/${n}.map)
  foreach(f ${stub_c} ${server_c} ${server_main_c} ${map} ${gen}/${n}_wire.h)
    if(NOT EXISTS ${f})
      message(WARNING "apigen_add_api(${n}): ${f} is missing: run `apigen ${spec} -o ${gen}` "
                      "(or the regen-${n} target) and commit it; the ${n} stub and server are not built")
      return()
    endif()
  endforeach()
  if(NOT rt_guest)
    message(WARNING "apigen_add_api(${n}): no apigen runtime: neither this tree's targets "
                    "apigen_guest_so and apigen_host nor an installed apigen's (find_package(apigen) "
                    "before apigen_add_api); the ${n} stub and server are not built")
    return()
  endif()

  # Include folders of the API headers: what the real library's targets
  # publish, plus INCLUDE_DIRS.
  set(api_incs ${incs})
  foreach(lib ${A_REAL_LIBS})
    if(TARGET ${lib})
      list(APPEND api_incs $<TARGET_PROPERTY:${lib},INTERFACE_INCLUDE_DIRECTORIES>)
    endif()
  endforeach()

  # Guest: a drop-in library named exactly like the real one.
  add_library(${n}_stub SHARED ${stub_c} ${srcs})
  apigen_lto(${n}_stub)
  target_include_directories(${n}_stub PRIVATE ${gen} ${api_incs})
  target_link_libraries(${n}_stub PRIVATE ${rt_guest})
  # calls into the shared guest runtime through the GOT, bound at load: no
  # PLT jump per call, no lazy lookup in the first calls
  target_compile_options(${n}_stub PRIVATE -fno-plt)
  set_target_properties(${n}_stub PROPERTIES
    BUILD_RPATH "$ORIGIN"
    INSTALL_RPATH "$ORIGIN"
    PREFIX ""
    OUTPUT_NAME ${A_SONAME}
    SUFFIX ""
    NO_SONAME ON
    C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${stub_dir}
    LINK_DEPENDS ${map})
  # -z nodelete: the shared guest runtime keeps this stub's apigen_api (and
  # its threads call the stub's callback dispatchers) for the process' life,
  # so a dlclose must not unmap it
  target_link_options(${n}_stub PRIVATE
    -Wl,-soname,${A_SONAME}
    -Wl,--version-script=${map}
    -Wl,-z,defs
    -Wl,-z,nodelete)

  # The shared guest runtime beside the stub (one file per folder, whichever
  # stub copies it: the same bytes). In this tree build/stub is where it is
  # built; an installed one is always copied.
  if(NOT rt_guest STREQUAL "apigen_guest_so" OR NOT stub_dir STREQUAL "${CMAKE_BINARY_DIR}/stub")
    add_custom_command(TARGET ${n}_stub POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:${rt_guest}>
              ${stub_dir}/$<TARGET_FILE_NAME:${rt_guest}>
      VERBATIM)
  endif()

  # What a family's server (apigen_add_family_server) takes of this API.
  set_property(GLOBAL PROPERTY APIGEN_API_${n}_SERVER_SOURCES ${server_c} ${host_srcs})
  set_property(GLOBAL PROPERTY APIGEN_API_${n}_INCLUDES ${gen} ${api_incs})
  set_property(GLOBAL PROPERTY APIGEN_API_${n}_REAL_LIBS ${A_REAL_LIBS})

  # Host: the server with the real library. DT_RPATH (not RUNPATH) so that an
  # LD_LIBRARY_PATH meant for a guest never makes it load the stub.
  add_executable(apigen-server-${n} ${server_c} ${server_main_c} ${host_srcs})
  apigen_lto(apigen-server-${n})
  target_include_directories(apigen-server-${n} PRIVATE ${gen} ${api_incs})
  target_link_libraries(apigen-server-${n} PRIVATE ${rt_host} ${A_REAL_LIBS})
  target_link_options(apigen-server-${n} PRIVATE -Wl,--disable-new-dtags)
endfunction()

# apigen_add_family_server(NAME name APIS api...): apigen-server-<name>, one
# server for the APIs of one family (spec api.family), each made before with
# apigen_add_api: their handlers, hand-written host code and real libraries
# in one binary, so that a guest that loads several of their stubs has one
# session there. The APIs' host sources must not define the same global
# symbols. The single-API servers stay as they are.
function(apigen_add_family_server)
  cmake_parse_arguments(A "" "NAME" "APIS" ${ARGN})
  if(NOT A_NAME OR NOT A_APIS)
    message(FATAL_ERROR "apigen_add_family_server: NAME and APIS are required")
  endif()
  set(srcs "")
  set(incs "")
  set(libs "")
  set(decls "")
  set(list "")
  foreach(n ${A_APIS})
    get_property(s GLOBAL PROPERTY APIGEN_API_${n}_SERVER_SOURCES)
    if(NOT s)
      message(WARNING "apigen_add_family_server(${A_NAME}): API ${n} was not added with "
                      "apigen_add_api (or not built); apigen-server-${A_NAME} is not built")
      return()
    endif()
    get_property(i GLOBAL PROPERTY APIGEN_API_${n}_INCLUDES)
    get_property(l GLOBAL PROPERTY APIGEN_API_${n}_REAL_LIBS)
    list(APPEND srcs ${s})
    list(APPEND incs ${i})
    list(APPEND libs ${l})
    string(APPEND decls "extern const apigen_api apigen_api_${n};\n")
    string(APPEND list "&apigen_api_${n}, ")
  endforeach()
  _apigen_runtime(rt_guest rt_host rt_gen)
  list(LENGTH A_APIS napis)
  set(main ${CMAKE_CURRENT_BINARY_DIR}/apigen_server_${A_NAME}_main.c)
  file(GENERATE OUTPUT ${main} CONTENT
"/* apigen-server-${A_NAME}: the APIs ${A_APIS} of one family in one server
 * (cmake/ApigenApi.cmake, apigen_add_family_server). */
#include \"apigen_rt.h\"

${decls}
int main(int argc, char **argv)
{
    static const apigen_api *const apis[] = {${list}};
    return apigen_server_main(argc, argv, apis, ${napis});
}
")
  add_executable(apigen-server-${A_NAME} ${main} ${srcs})
  apigen_lto(apigen-server-${A_NAME})
  target_include_directories(apigen-server-${A_NAME} PRIVATE ${incs})
  target_link_libraries(apigen-server-${A_NAME} PRIVATE ${rt_host} ${libs})
  target_link_options(apigen-server-${A_NAME} PRIVATE -Wl,--disable-new-dtags)
endfunction()
