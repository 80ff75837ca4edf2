# Plots for the gpuhist command (cli/plot.c, --plot FILE.png|.svg|.pdf): drawn with cairo
# (Debian libcairo2-dev), found through pkg-config. Optional: without cairo, or with
# GPUHIST_PLOT=OFF, plot.c is built as stubs and --plot is refused with a message naming the
# package to install. The result is the INTERFACE target gpuhist_plot_lib (cairo's include
# directories and libraries, GPUHIST_HAVE_CAIRO and GPUHIST_HAVE_FONTCONFIG = 0 or 1) for the
# command.
option(GPUHIST_PLOT "Draw histograms in the command (--plot) with cairo where it is found" ON)

add_library(gpuhist_plot_lib INTERFACE)
set(GPUHIST_HAVE_CAIRO 0)
set(GPUHIST_HAVE_FONTCONFIG 0)
if(GPUHIST_PLOT)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(GPUHIST_CAIRO QUIET IMPORTED_TARGET cairo)
  endif()
  if(GPUHIST_CAIRO_FOUND)
    set(GPUHIST_HAVE_CAIRO 1)
    target_link_libraries(gpuhist_plot_lib INTERFACE PkgConfig::GPUHIST_CAIRO)
    # fontconfig (which cairo's text uses; libcairo2-dev brings its headers): FcFini after the
    # plot releases its caches, so leak checkers see nothing left behind
    pkg_check_modules(GPUHIST_FONTCONFIG QUIET IMPORTED_TARGET fontconfig)
    if(GPUHIST_FONTCONFIG_FOUND)
      set(GPUHIST_HAVE_FONTCONFIG 1)
      target_link_libraries(gpuhist_plot_lib INTERFACE PkgConfig::GPUHIST_FONTCONFIG)
    endif()
    message(STATUS "gpuhist: plots: cairo ${GPUHIST_CAIRO_VERSION}")
  else()
    message(STATUS "gpuhist: plots: cairo not found (install libcairo2-dev and pkg-config); "
                   "--plot left out")
  endif()
else()
  message(STATUS "gpuhist: plots: off (GPUHIST_PLOT=OFF)")
endif()
target_compile_definitions(gpuhist_plot_lib INTERFACE GPUHIST_HAVE_CAIRO=${GPUHIST_HAVE_CAIRO}
                                                     GPUHIST_HAVE_FONTCONFIG=${GPUHIST_HAVE_FONTCONFIG})
