# Installing and packaging: `cmake --install <build> --prefix /usr`, and a Debian
# package from it (`cmake --build <build> --target package`, CPack's DEB generator).
#
# Layout (GNUInstallDirs, under the prefix):
#   bin/                      tandem-supervisor, tandem-worker (found beside the supervisor),
#                             tandem-ctl, tandem-shm, tandem-bench
#   lib/, include/tandem/     tandem::LocalReader: static libraries and headers (CMakeLists.txt)
#   lib/python3/dist-packages the LocalReader Python module, when built
#   share/man/man1/           man pages, generated from each binary's --help with help2man
#   share/bash-completion/completions/   completion of commands and options
#   lib/systemd/system/       tandem-supervisor@.service (instance = replica id)
#   share/doc/tandem/         README, BENCHMARKS, the deploy/ examples (Kubernetes, Grafana,
#                             the container file, an environment file for the unit)
# The package's postinst creates the system user `tandem` (the unit's User=) and /etc/tandem/, where
# the unit reads <replica>.env (an example: share/doc/tandem/examples/systemd/tandem.env).

include(GNUInstallDirs)

# --- man pages ---------------------------------------------------------------------------------
# help2man runs the freshly built binary by name (PATH = the build's bin/) so the page says
# "tandem-shm", not a build path. Linted by tests/deploy (mandoc -T lint).
# Not in the sanitizer trees: there the binaries run under ASan/TSan at build time, for nothing.
find_program(TANDEM_HELP2MAN help2man)
set(TANDEM_MAN_BUILD ${TANDEM_HELP2MAN})
if(TANDEM_SANITIZE OR CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  set(TANDEM_MAN_BUILD OFF)
endif()
set(TANDEM_MAN_PAGES
  "tandem-supervisor|run one Tandem replica: its segment, its runtimes, its controller endpoint"
  "tandem-ctl|the reference controller of a Tandem replica (or of several)"
  "tandem-shm|inspect a Tandem shared-memory segment, live or after a crash"
  "tandem-bench|benchmark real Tandem replicas against their peers")
if(TANDEM_MAN_BUILD)
  set(man_outputs)
  foreach(entry IN LISTS TANDEM_MAN_PAGES)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 prog)
    list(GET parts 1 summary)
    if(NOT TARGET ${prog})
      continue()
    endif()
    # The page itself (linted by the tests) and its gzip -9n (installed: Debian policy 12.1).
    set(page ${CMAKE_BINARY_DIR}/man/${prog}.1)
    add_custom_command(
      OUTPUT ${page} ${page}.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND ${CMAKE_COMMAND} -E env PATH=$<TARGET_FILE_DIR:${prog}>:/usr/bin:/bin
              ${TANDEM_HELP2MAN} --no-info --no-discard-stderr --section=1
              --version-string=${PROJECT_VERSION} --name=${summary}
              --source=Tandem --manual=Tandem --output=${page} ${prog}
      COMMAND gzip -9nf -k ${page}
      DEPENDS ${prog}
      COMMENT "man page of ${prog} (help2man)"
      VERBATIM)
    list(APPEND man_outputs ${page}.gz)
  endforeach()
  add_custom_target(tandem-man ALL DEPENDS ${man_outputs})
  install(FILES ${man_outputs} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
elseif(NOT TANDEM_HELP2MAN)
  message(STATUS "help2man not found: no man pages (apt-get install help2man; "
                 "Deploy.ManPagesAreGeneratedAndLintClean fails without them)")
endif()

# --- the rest of what is installed ---------------------------------------------------------------
install(TARGETS tandem-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(prog tandem-supervisor tandem-ctl tandem-shm tandem-bench)
  install(FILES ${PROJECT_SOURCE_DIR}/deploy/completion/tandem.bash
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${prog})
endforeach()
# lib/systemd/system under the prefix: /usr/lib/systemd/system for the package (Debian 12 reads
# it: /lib is /usr/lib).
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/tandem-supervisor@.service
        DESTINATION lib/systemd/system)
install(FILES README.md BENCHMARKS.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# README.md links the reference pages in docs/ (and BENCHMARKS.md its plots): installed beside it so
# the links hold in the package.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/kubernetes ${PROJECT_SOURCE_DIR}/deploy/grafana
                  ${PROJECT_SOURCE_DIR}/deploy/container ${PROJECT_SOURCE_DIR}/deploy/systemd
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples OPTIONAL)

# --- the Debian package --------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tandem)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Tandem maintainers <tandem@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "shared-memory compute replica: indexes kept current, reads at a chosen time")
set(CPACK_PACKAGE_DESCRIPTION
    "Tandem runs a compute replica as two processes over one shared-memory segment: a\n"
    "maintenance runtime keeps indexes over changing data current, an interactive runtime\n"
    "serves reads from the same indexes in place. tandem-supervisor fronts both with one\n"
    "ZeroMQ controller endpoint; tandem-ctl is the reference controller.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tandem_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Dependencies from the binaries themselves (dpkg-shlibdeps: Debian 12's package names and
# versions), plus what the maintainer scripts use.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "systemd, python3")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
