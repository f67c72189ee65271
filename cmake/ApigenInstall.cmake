# cmake --install: the generator, the runtime and transport libraries, their
# headers, the templates, the CMake package (find_package(apigen): apigen_add_api
# and apigen_add_family_server) and pkg-config files, in the GNUInstallDirs
# places, so that a project outside this tree builds its own API's stub and
# server (docs/tutorial.md). Nothing here changes the in-tree build.
include(CMakePackageConfigHelpers)

set(APIGEN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/apigen)

# Exported as apigen::guest (the shared guest runtime every stub loads),
# apigen::host (what a server links), apigen::transport, apigen::guest_static
# and apigen::apigen (the generator).
set_target_properties(apigen_guest_so PROPERTIES EXPORT_NAME guest)
set_target_properties(apigen_guest PROPERTIES EXPORT_NAME guest_static)
set_target_properties(apigen_host PROPERTIES EXPORT_NAME host)
set_target_properties(apigen_transport PROPERTIES EXPORT_NAME transport)
set(_apigen_install_targets apigen_guest_so apigen_guest apigen_host apigen_transport)
if(TARGET apigen)
  list(APPEND _apigen_install_targets apigen)
endif()
install(TARGETS ${_apigen_install_targets} EXPORT apigenTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT apigenTargets NAMESPACE apigen:: DESTINATION ${APIGEN_CMAKE_DIR})

# The headers generated code and hand-written spec C include.
install(FILES
  ${PROJECT_SOURCE_DIR}/runtime/apigen_rt.h
  ${PROJECT_SOURCE_DIR}/runtime/apigen_boxes.h
  ${PROJECT_SOURCE_DIR}/runtime/apigen_copy.h
  ${PROJECT_SOURCE_DIR}/runtime/apigen_hobj.h
  ${PROJECT_SOURCE_DIR}/transports/transport.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/apigen)

# The templates apigen was built with (embedded in the binary; installed to
# read, and for docs/internals.md's description of each fragment).
file(GLOB _apigen_tmpl ${PROJECT_SOURCE_DIR}/templates/*.tmpl)
install(FILES ${_apigen_tmpl} DESTINATION ${CMAKE_INSTALL_DATADIR}/apigen/templates)

# The package: apigenConfig.cmake finds the dependencies of the exported
# targets and includes ApigenApi.cmake, which works on imported targets too.
set(APIGEN_CONFIG_TLS ${APIGEN_HAVE_TLS})
set(APIGEN_CONFIG_IPO ${APIGEN_IPO})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/apigenConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/apigenConfig.cmake
  INSTALL_DESTINATION ${APIGEN_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/apigenConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_BINARY_DIR}/cmake/apigenConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/apigenConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/ApigenApi.cmake
  DESTINATION ${APIGEN_CMAKE_DIR})

# pkg-config: apigen (the guest runtime, shared) and apigen-host (the host
# runtime and transports, static, with what they link).
set(_apigen_host_libs "-lapigen_host -lapigen_transport -pthread")
if(APIGEN_HAVE_TLS)
  set(_apigen_pc_requires "Requires.private: libssl libcrypto")
  string(APPEND _apigen_host_libs " -lssl -lcrypto")
endif()
if(APIGEN_HAVE_UCX)
  string(APPEND _apigen_host_libs " -l${CMAKE_DL_LIBS}")
endif()
# The .pc files find the prefix from where they are (${pcfiledir}), so that
# `cmake --install build --prefix DIR` works whatever CMAKE_INSTALL_PREFIX was.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(APIGEN_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  set(APIGEN_PC_PREFIX "\${pcfiledir}")
  string(REPLACE "/" ";" _pc_parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  foreach(_p ${_pc_parts})
    string(APPEND APIGEN_PC_PREFIX "/..")
  endforeach()
endif()
foreach(pc apigen apigen-host)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/cmake/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/cmake/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
