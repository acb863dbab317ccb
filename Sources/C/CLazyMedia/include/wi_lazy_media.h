#ifndef WI_LAZY_MEDIA_H
#define WI_LAZY_MEDIA_H

/// FFmpeg (libavformat, libavcodec, libswscale, libavutil) and poppler-glib, loaded with dlopen
/// when first used instead of linked.
///
/// Why: their DT_NEEDED trees bring 188 shared libraries into the process, each bound at load
/// (BIND_NOW, some 20,000 relocations apiece), which cost every `webimage` start about 70 ms in
/// the dynamic loader (perf: do_lookup_x), even for a command that never decodes a video or a
/// PDF, and every renderer child process paid it again. Linked this way, only a video or PDF
/// decode pays it, once per process.
///
/// How: wi_lazy_ffmpeg.c and wi_lazy_poppler.c define every FFmpeg and poppler-glib function the
/// Swift code calls, under the library's own name and with the prototype its header declares
/// (they include the real headers, so the compiler checks each one), hidden (never exported, so
/// never interposed on the libraries' own calls to each other). Each forwards to the function
/// found by dlsym in the library opened once, under pthread_once, with
/// dlopen("libavformat.so.59" and the others, RTLD_NOW | RTLD_LOCAL). The Swift code keeps
/// calling the names CFFmpeg's and CPoppler's headers declare; the linker resolves them here.
///
/// The decoders ask wi_lazy_ffmpeg_available() or wi_lazy_poppler_available() before their
/// first call, and throw when the library is not installed. A forwarder called while its
/// library is unavailable prints why and aborts (no decoder path reaches one).
///
/// Adding a call to another FFmpeg or poppler-glib function in Swift needs its forwarder here:
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

#ifdef __cplusplus
}
#endif

#endif
