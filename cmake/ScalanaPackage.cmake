# Installed use (docs/static.md, section 2 "Installed use"): a CMake package
# (find_package(Scalana), scalana_use_wrappers()), a toolchain file that makes
# the wrappers a project's compilers, and a pkg-config file. Included by the
# top-level CMakeLists.txt after the targets are defined.
include(CMakePackageConfigHelpers)

set(SCALANA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Scalana)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ScalanaConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/ScalanaConfig.cmake
  INSTALL_DESTINATION ${SCALANA_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/ScalanaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
# The toolchain file finds bin/ relative to itself, so the prefix can move.
file(RELATIVE_PATH SCALANA_CMAKE_TO_BIN /${SCALANA_CMAKE_DIR} /${CMAKE_INSTALL_BINDIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/ScalanaToolchain.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/ScalanaToolchain.cmake @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/ScalanaConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/ScalanaConfigVersion.cmake
  ${CMAKE_BINARY_DIR}/cmake/ScalanaToolchain.cmake
  DESTINATION ${SCALANA_CMAKE_DIR})

# pkg-config files hold absolute paths: written at install time, when the
# prefix (`cmake --install --prefix`) is known.
install(CODE "
  set(SCALANA_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(CMAKE_INSTALL_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(CMAKE_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(pc \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/scalana.pc\")
  configure_file(\"${CMAKE_CURRENT_LIST_DIR}/scalana.pc.in\" \"\${pc}\" @ONLY)
  message(STATUS \"Installing: \${pc}\")
")

# The documentation the wrappers' notes point to (docs/static.md).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  FILES_MATCHING PATTERN "*.md")
