# `cmake --install BUILD --prefix P`: what a C library installs.
#
#   P/lib/libwavewarp.so.VERSION (SONAME libwavewarp.so.0.2), libwavewarp.so, libwavewarp.a
#   P/include/wavewarp.h
#   P/bin/wavewarp                         (the CLI, when WAVEWARP_BUILD_TOOLS is on)
#   P/lib/cmake/wavewarp/                  find_package(wavewarp): wavewarp::wavewarp (shared),
#                                          wavewarp::wavewarp_static (static, with OpenMP and in
#                                          CUDA builds the CUDA runtime as link dependencies)
#   P/lib/pkgconfig/wavewarp.pc            pkg-config --cflags --libs wavewarp; --static adds the
#                                          static library's dependencies (Libs.private)
#
# tests/install_test.sh installs into a temporary prefix and builds the README's C example with
# each of them.
include(CMakePackageConfigHelpers)

set(WW_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/wavewarp)

install(TARGETS wavewarp EXPORT wavewarpTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(WW_HAVE_CUDA)
  # the CUDA objects in the archive use the C++ runtime: a C program linking it with the C compiler
  # (as users do) needs it too (in this build the CUDA linker adds it)
  target_link_libraries(wavewarp_static INTERFACE $<INSTALL_INTERFACE:stdc++>)
endif()
install(TARGETS wavewarp_static EXPORT wavewarpStaticTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/wavewarp.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET wavewarp_cli)
  install(TARGETS wavewarp_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# ---- CMake package
install(EXPORT wavewarpTargets NAMESPACE wavewarp:: DESTINATION ${WW_CMAKE_PACKAGE_DIR})
install(EXPORT wavewarpStaticTargets NAMESPACE wavewarp:: DESTINATION ${WW_CMAKE_PACKAGE_DIR})
if(OpenMP_C_FOUND)
  set(WW_PACKAGE_OPENMP ON)
else()
  set(WW_PACKAGE_OPENMP OFF)
endif()
set(WW_PACKAGE_CUDA ${WW_HAVE_CUDA})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/wavewarpConfig.cmake.in
  ${PROJECT_BINARY_DIR}/wavewarpConfig.cmake
  INSTALL_DESTINATION ${WW_CMAKE_PACKAGE_DIR})
# before 1.0 a minor version may change the API: only the same major.minor is compatible
write_basic_package_version_file(${PROJECT_BINARY_DIR}/wavewarpConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/wavewarpConfig.cmake ${PROJECT_BINARY_DIR}/wavewarpConfigVersion.cmake
        DESTINATION ${WW_CMAKE_PACKAGE_DIR})

# ---- pkg-config
# Libs.private: what a static link needs besides libwavewarp.a (pkg-config --static).
set(WW_PC_LIBS_PRIVATE "")
if(OpenMP_C_FOUND)
  foreach(lib IN LISTS OpenMP_C_LIB_NAMES)
    string(APPEND WW_PC_LIBS_PRIVATE " -l${lib}")
  endforeach()
endif()
if(WW_HAVE_CUDA)
  # the CUDA runtime as CUDA::cudart_static links it; the device code was linked into the archive
  string(APPEND WW_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lstdc++")
  foreach(lib IN LISTS CMAKE_DL_LIBS ITEMS pthread rt)
    string(APPEND WW_PC_LIBS_PRIVATE " -l${lib}")
  endforeach()
endif()
string(APPEND WW_PC_LIBS_PRIVATE " -lm")
string(STRIP "${WW_PC_LIBS_PRIVATE}" WW_PC_LIBS_PRIVATE)
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(WW_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(WW_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
# The prefix is known only when installing (cmake --install --prefix P): the template keeps the
# placeholder, filled in by the install step itself.
set(WW_PC_PREFIX "@WW_PC_PREFIX@")
configure_file(${CMAKE_CURRENT_LIST_DIR}/wavewarp.pc.in ${PROJECT_BINARY_DIR}/wavewarp.pc.in @ONLY)
install(CODE "
  set(WW_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/wavewarp.pc.in\" \"${PROJECT_BINARY_DIR}/pkgconfig/wavewarp.pc\" @ONLY)
")
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/wavewarp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
