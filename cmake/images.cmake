# Image decoders for the gpuhist command (cli/image*.c): each format is built in when its
# library is found, and left out otherwise (the command then names the package to install when
# it meets such a file). GPUHIST_IMAGES=OFF leaves all of them out.
#   PNG:  libpng (Debian libpng-dev), find_package(PNG)
#   JPEG: libjpeg-turbo (libjpeg-dev), find_package(JPEG)
#   TIFF: libtiff >= 4.5 (libtiff-dev), find_package(TIFF); 4.5 for per-file error handlers
#   PNM:  libnetpbm (libnetpbm-dev), found by its header netpbm/pam.h and library netpbm
# The result is the INTERFACE target gpuhist_image_codecs (include directories, libraries and the
# definitions GPUHIST_HAVE_PNG / _JPEG / _TIFF / _NETPBM = 0 or 1) for the command and the fuzz
# harnesses that compile cli/*.c.
option(GPUHIST_IMAGES "Read images in the command (PNG, JPEG, TIFF, PNM) where their libraries are found" ON)

add_library(gpuhist_image_codecs INTERFACE)
set(GPUHIST_HAVE_PNG 0)
set(GPUHIST_HAVE_JPEG 0)
set(GPUHIST_HAVE_TIFF 0)
set(GPUHIST_HAVE_NETPBM 0)
if(GPUHIST_IMAGES)
  find_package(PNG QUIET)
  if(PNG_FOUND)
    set(GPUHIST_HAVE_PNG 1)
    target_link_libraries(gpuhist_image_codecs INTERFACE PNG::PNG)
  endif()
  find_package(JPEG QUIET)
  if(JPEG_FOUND)
    set(GPUHIST_HAVE_JPEG 1)
    target_link_libraries(gpuhist_image_codecs INTERFACE JPEG::JPEG)
  endif()
  find_package(TIFF QUIET)
  if(TIFF_FOUND)
    if(TIFF_VERSION_STRING VERSION_GREATER_EQUAL 4.5)
      set(GPUHIST_HAVE_TIFF 1)
      target_link_libraries(gpuhist_image_codecs INTERFACE TIFF::TIFF)
    else()
      message(STATUS "gpuhist: libtiff ${TIFF_VERSION_STRING} is older than 4.5; TIFF left out")
    endif()
  endif()
  find_path(GPUHIST_NETPBM_INCLUDE_DIR netpbm/pam.h)
  find_library(GPUHIST_NETPBM_LIBRARY netpbm)
  if(GPUHIST_NETPBM_INCLUDE_DIR AND GPUHIST_NETPBM_LIBRARY)
    set(GPUHIST_HAVE_NETPBM 1)
    target_include_directories(gpuhist_image_codecs INTERFACE ${GPUHIST_NETPBM_INCLUDE_DIR})
    target_link_libraries(gpuhist_image_codecs INTERFACE ${GPUHIST_NETPBM_LIBRARY})
  endif()
endif()
target_compile_definitions(gpuhist_image_codecs INTERFACE
  GPUHIST_HAVE_PNG=${GPUHIST_HAVE_PNG} GPUHIST_HAVE_JPEG=${GPUHIST_HAVE_JPEG}
  GPUHIST_HAVE_TIFF=${GPUHIST_HAVE_TIFF} GPUHIST_HAVE_NETPBM=${GPUHIST_HAVE_NETPBM})
message(STATUS "gpuhist: images: PNG ${GPUHIST_HAVE_PNG}, JPEG ${GPUHIST_HAVE_JPEG}, "
               "TIFF ${GPUHIST_HAVE_TIFF}, PNM ${GPUHIST_HAVE_NETPBM}")
