# `cmake --install build` installs the two programs, a desktop entry, an icon and the user guide;
# `cpack` (run in the build folder) makes a Debian package of the same files, its dependencies
# found from the binaries' shared libraries. The programs are built for this machine's processor
# (ATTNLAB_NATIVE): configure with -DATTNLAB_NATIVE=OFF for a package meant for other machines.
if(NOT ATTNLAB_HEADLESS)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/attnlab.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/attnlab.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/resources/guide/guide.md ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/guide/images DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Installing assumes the programs are built (ctest and cpack run after the build): it builds nothing.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnlab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Attention Lab: build, train and watch small Transformers")
set(CPACK_PACKAGE_CONTACT "Attention Lab developers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "A Qt desktop app and a command-line tool with an embedded Transformer\n training and inference engine: attention maps, KV-cache policies, spectra, causal analyses,\n guided tours, and real models opened from Hugging Face folders.")
include(CPack)
