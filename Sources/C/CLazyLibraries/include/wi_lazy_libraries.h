#ifndef WI_LAZY_LIBRARIES_H
#define WI_LAZY_LIBRARIES_H

/// The codec libraries few runs need, loaded with dlopen when first used instead of linked:
/// FFmpeg (libavformat, libavcodec, libswscale, libavutil), poppler-glib, libjxl, libheif and
/// libavif.
///
/// Why: linked, they are loaded and bound (BIND_NOW) at every start of every process, with
/// their dependencies, and some run work when loaded. FFmpeg's and poppler-glib's trees bring
/// 188 shared libraries (some 20,000 relocations apiece): about 70 ms a `webimage` start in the
/// dynamic loader (perf: do_lookup_x). libjxl's libhwy measures its timer's resolution when
/// loaded (2.7 ms), libheif's libde265 fills its tables (1.4 ms), and with libavif's AV1
/// codecs the three cost 5.7 ms a start (docs/benchmarks.md). Every command paid that, and
/// every renderer child process again, whether or not it ever met a video, a PDF, a JPEG XL,
/// a HEIF or an AVIF. Loaded this way, only the first decode or encode of one pays, once a
/// process.
///
/// How: one file per set (wi_lazy_ffmpeg.c, wi_lazy_poppler.c, wi_lazy_jxl.c, wi_lazy_heif.c,
/// wi_lazy_avif.c) defines every function of those libraries the Swift code calls, under the
/// library's own name and with the prototype its header declares (they include the real
/// headers, so the compiler checks each one), hidden (never exported, so never interposed on
/// the libraries' own calls to each other). Each forwards to the function found by dlsym in the
/// libraries opened once, under pthread_once, with dlopen(soname, RTLD_NOW | RTLD_LOCAL)
/// (wi_lazy_load.h). The Swift code keeps calling the names the C modules' headers declare;
/// the linker resolves them here.
///
/// The codecs ask wi_lazy_<set>_available() before their first call, and throw when the
/// library is not installed. A forwarder called while its library is unavailable prints why and
/// aborts (no codec path reaches one).
///
/// Adding a call to another function of these libraries in Swift needs its forwarder here:
/// without one the link fails with an undefined symbol (the libraries are not linked).

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when libavformat.so.59, libavcodec.so.59, libswscale.so.6 and libavutil.so.57 are loaded
/// and every function forwarded resolved, else 0. The first call loads them (thread-safe).
int wi_lazy_ffmpeg_available(void);
/// Why FFmpeg is unavailable (dlerror's message), or NULL when it is available.
const char *wi_lazy_ffmpeg_failure(void);

/// 1 when libpoppler-glib.so.8 is loaded and every function forwarded resolved, else 0. The
/// first call loads it (thread-safe).
int wi_lazy_poppler_available(void);
/// Why poppler-glib is unavailable (dlerror's message), or NULL when it is available.
const char *wi_lazy_poppler_failure(void);

/// 1 when libjxl.so.0.7 is loaded and every function forwarded resolved, else 0 (thread-safe).
int wi_lazy_jxl_available(void);
/// Why libjxl is unavailable (dlerror's message), or NULL when it is available.
const char *wi_lazy_jxl_failure(void);

/// 1 when libheif.so.1 is loaded and every function forwarded resolved, else 0 (thread-safe).
int wi_lazy_heif_available(void);
/// Why libheif is unavailable (dlerror's message), or NULL when it is available.
const char *wi_lazy_heif_failure(void);

/// 1 when libavif.so.15 is loaded and every function forwarded resolved, else 0 (thread-safe).
int wi_lazy_avif_available(void);
/// Why libavif is unavailable (dlerror's message), or NULL when it is available.
const char *wi_lazy_avif_failure(void);

#ifdef __cplusplus
}
#endif

#endif
