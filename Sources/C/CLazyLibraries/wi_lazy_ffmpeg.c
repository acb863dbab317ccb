// FFmpeg 5.1 (Debian 12), loaded when first used: see include/wi_lazy_libraries.h. Every function
// the Swift code in Sources/WebImageCodecs calls is defined here, hidden, under its own name and
// with its header's prototype (the headers are included, so a mismatch does not compile), and
// forwards to the library's function.
#include "wi_lazy_libraries.h"
#include "wi_lazy_load.h"

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/display.h>
#include <libavutil/opt.h>
#include <libavutil/dict.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libavutil/error.h>
#include <libavutil/mathematics.h>

enum { WI_AVUTIL, WI_AVCODEC, WI_SWSCALE, WI_AVFORMAT, WI_FFMPEG_LIBRARIES };

/// The sonames, FFmpeg 5.1's (libavformat59, libavcodec59, libswscale6, libavutil57).
static const char *const wi_ffmpeg_sonames[WI_FFMPEG_LIBRARIES] = {
    [WI_AVUTIL] = "libavutil.so.57",
    [WI_AVCODEC] = "libavcodec.so.59",
    [WI_SWSCALE] = "libswscale.so.6",
    [WI_AVFORMAT] = "libavformat.so.59",
};

/// Every function forwarded, with its library.
#define WI_FFMPEG_FUNCTIONS(X)                       \
    X(WI_AVFORMAT, av_find_best_stream)              \
    X(WI_AVFORMAT, av_find_input_format)             \
    X(WI_AVFORMAT, av_guess_sample_aspect_ratio)     \
    X(WI_AVFORMAT, av_read_frame)                    \
    X(WI_AVFORMAT, av_seek_frame)                    \
    X(WI_AVFORMAT, av_stream_get_side_data)          \
    X(WI_AVFORMAT, avformat_alloc_context)           \
    X(WI_AVFORMAT, avformat_close_input)             \
    X(WI_AVFORMAT, avformat_open_input)              \
    X(WI_AVFORMAT, avio_alloc_context)               \
    X(WI_AVFORMAT, avio_context_free)                \
    X(WI_AVCODEC, av_packet_alloc)                   \
    X(WI_AVCODEC, av_packet_free)                    \
    X(WI_AVCODEC, av_packet_unref)                   \
    X(WI_AVCODEC, avcodec_alloc_context3)            \
    X(WI_AVCODEC, avcodec_find_decoder)              \
    X(WI_AVCODEC, avcodec_flush_buffers)             \
    X(WI_AVCODEC, avcodec_free_context)              \
    X(WI_AVCODEC, avcodec_get_name)                  \
    X(WI_AVCODEC, avcodec_open2)                     \
    X(WI_AVCODEC, avcodec_parameters_to_context)     \
    X(WI_AVCODEC, avcodec_receive_frame)             \
    X(WI_AVCODEC, avcodec_send_packet)               \
    X(WI_SWSCALE, sws_alloc_context)                 \
    X(WI_SWSCALE, sws_freeContext)                   \
    X(WI_SWSCALE, sws_getCoefficients)               \
    X(WI_SWSCALE, sws_init_context)                  \
    X(WI_SWSCALE, sws_scale_frame)                   \
    X(WI_SWSCALE, sws_setColorspaceDetails)          \
    X(WI_AVUTIL, av_dict_free)                       \
    X(WI_AVUTIL, av_dict_set)                        \
    X(WI_AVUTIL, av_display_rotation_get)            \
    X(WI_AVUTIL, av_frame_alloc)                     \
    X(WI_AVUTIL, av_frame_free)                      \
    X(WI_AVUTIL, av_frame_get_buffer)                \
    X(WI_AVUTIL, av_frame_get_side_data)             \
    X(WI_AVUTIL, av_free)                            \
    X(WI_AVUTIL, av_freep)                           \
    X(WI_AVUTIL, av_get_pix_fmt_name)                \
    X(WI_AVUTIL, av_log_set_level)                   \
    X(WI_AVUTIL, av_malloc)                          \
    X(WI_AVUTIL, av_max_alloc)                       \
    X(WI_AVUTIL, av_opt_set_int)                     \
    X(WI_AVUTIL, av_pix_fmt_desc_get)                \
    X(WI_AVUTIL, av_rescale_q_rnd)                   \
    X(WI_AVUTIL, av_strerror)

WI_LAZY_DEFINE(ffmpeg, "FFmpeg", wi_ffmpeg_sonames, WI_FFMPEG_FUNCTIONS)

// libavformat

WI_HIDDEN int av_find_best_stream(AVFormatContext *ic, enum AVMediaType type, int wanted_stream_nb,
                                  int related_stream, const AVCodec **decoder_ret, int flags) {
    return WI_LAZY(av_find_best_stream)(ic, type, wanted_stream_nb, related_stream, decoder_ret, flags);
}

WI_HIDDEN const AVInputFormat *av_find_input_format(const char *short_name) {
    return WI_LAZY(av_find_input_format)(short_name);
}

WI_HIDDEN AVRational av_guess_sample_aspect_ratio(AVFormatContext *format, AVStream *stream, AVFrame *frame) {
    return WI_LAZY(av_guess_sample_aspect_ratio)(format, stream, frame);
}

WI_HIDDEN int av_read_frame(AVFormatContext *s, AVPacket *pkt) {
    return WI_LAZY(av_read_frame)(s, pkt);
}

WI_HIDDEN int av_seek_frame(AVFormatContext *s, int stream_index, int64_t timestamp, int flags) {
    return WI_LAZY(av_seek_frame)(s, stream_index, timestamp, flags);
}

WI_HIDDEN uint8_t *av_stream_get_side_data(const AVStream *stream, enum AVPacketSideDataType type, size_t *size) {
    return WI_LAZY(av_stream_get_side_data)(stream, type, size);
}

WI_HIDDEN AVFormatContext *avformat_alloc_context(void) {
    return WI_LAZY(avformat_alloc_context)();
}

WI_HIDDEN void avformat_close_input(AVFormatContext **s) {
    WI_LAZY(avformat_close_input)(s);
}

WI_HIDDEN int avformat_open_input(AVFormatContext **ps, const char *url, const AVInputFormat *fmt, AVDictionary **options) {
    return WI_LAZY(avformat_open_input)(ps, url, fmt, options);
}

WI_HIDDEN AVIOContext *avio_alloc_context(unsigned char *buffer, int buffer_size, int write_flag, void *opaque,
                                          int (*read_packet)(void *opaque, uint8_t *buf, int buf_size),
                                          int (*write_packet)(void *opaque, uint8_t *buf, int buf_size),
                                          int64_t (*seek)(void *opaque, int64_t offset, int whence)) {
    return WI_LAZY(avio_alloc_context)(buffer, buffer_size, write_flag, opaque, read_packet, write_packet, seek);
}

WI_HIDDEN void avio_context_free(AVIOContext **s) {
    WI_LAZY(avio_context_free)(s);
}

// libavcodec

WI_HIDDEN AVPacket *av_packet_alloc(void) {
    return WI_LAZY(av_packet_alloc)();
}

WI_HIDDEN void av_packet_free(AVPacket **pkt) {
    WI_LAZY(av_packet_free)(pkt);
}

WI_HIDDEN void av_packet_unref(AVPacket *pkt) {
    WI_LAZY(av_packet_unref)(pkt);
}

WI_HIDDEN AVCodecContext *avcodec_alloc_context3(const AVCodec *codec) {
    return WI_LAZY(avcodec_alloc_context3)(codec);
}

WI_HIDDEN const AVCodec *avcodec_find_decoder(enum AVCodecID id) {
    return WI_LAZY(avcodec_find_decoder)(id);
}

WI_HIDDEN void avcodec_flush_buffers(AVCodecContext *avctx) {
    WI_LAZY(avcodec_flush_buffers)(avctx);
}

WI_HIDDEN void avcodec_free_context(AVCodecContext **avctx) {
    WI_LAZY(avcodec_free_context)(avctx);
}

WI_HIDDEN const char *avcodec_get_name(enum AVCodecID id) {
    return WI_LAZY(avcodec_get_name)(id);
}

WI_HIDDEN int avcodec_open2(AVCodecContext *avctx, const AVCodec *codec, AVDictionary **options) {
    return WI_LAZY(avcodec_open2)(avctx, codec, options);
}

WI_HIDDEN int avcodec_parameters_to_context(AVCodecContext *codec, const AVCodecParameters *par) {
    return WI_LAZY(avcodec_parameters_to_context)(codec, par);
}

WI_HIDDEN int avcodec_receive_frame(AVCodecContext *avctx, AVFrame *frame) {
    return WI_LAZY(avcodec_receive_frame)(avctx, frame);
}

WI_HIDDEN int avcodec_send_packet(AVCodecContext *avctx, const AVPacket *avpkt) {
    return WI_LAZY(avcodec_send_packet)(avctx, avpkt);
}

// libswscale

WI_HIDDEN struct SwsContext *sws_alloc_context(void) {
    return WI_LAZY(sws_alloc_context)();
}

WI_HIDDEN void sws_freeContext(struct SwsContext *swsContext) {
    WI_LAZY(sws_freeContext)(swsContext);
}

WI_HIDDEN const int *sws_getCoefficients(int colorspace) {
    return WI_LAZY(sws_getCoefficients)(colorspace);
}

WI_HIDDEN int sws_init_context(struct SwsContext *sws_context, SwsFilter *srcFilter, SwsFilter *dstFilter) {
    return WI_LAZY(sws_init_context)(sws_context, srcFilter, dstFilter);
}

WI_HIDDEN int sws_scale_frame(struct SwsContext *c, AVFrame *dst, const AVFrame *src) {
    return WI_LAZY(sws_scale_frame)(c, dst, src);
}

WI_HIDDEN int sws_setColorspaceDetails(struct SwsContext *c, const int inv_table[4], int srcRange, const int table[4],
                                       int dstRange, int brightness, int contrast, int saturation) {
    return WI_LAZY(sws_setColorspaceDetails)(c, inv_table, srcRange, table, dstRange, brightness, contrast, saturation);
}

// libavutil

WI_HIDDEN void av_dict_free(AVDictionary **m) {
    WI_LAZY(av_dict_free)(m);
}

WI_HIDDEN int av_dict_set(AVDictionary **pm, const char *key, const char *value, int flags) {
    return WI_LAZY(av_dict_set)(pm, key, value, flags);
}

WI_HIDDEN double av_display_rotation_get(const int32_t matrix[9]) {
    return WI_LAZY(av_display_rotation_get)(matrix);
}

WI_HIDDEN AVFrame *av_frame_alloc(void) {
    return WI_LAZY(av_frame_alloc)();
}

WI_HIDDEN void av_frame_free(AVFrame **frame) {
    WI_LAZY(av_frame_free)(frame);
}

WI_HIDDEN int av_frame_get_buffer(AVFrame *frame, int align) {
    return WI_LAZY(av_frame_get_buffer)(frame, align);
}

WI_HIDDEN AVFrameSideData *av_frame_get_side_data(const AVFrame *frame, enum AVFrameSideDataType type) {
    return WI_LAZY(av_frame_get_side_data)(frame, type);
}

WI_HIDDEN void av_free(void *ptr) {
    WI_LAZY(av_free)(ptr);
}

WI_HIDDEN void av_freep(void *ptr) {
    WI_LAZY(av_freep)(ptr);
}

WI_HIDDEN const char *av_get_pix_fmt_name(enum AVPixelFormat pix_fmt) {
    return WI_LAZY(av_get_pix_fmt_name)(pix_fmt);
}

WI_HIDDEN void av_log_set_level(int level) {
    WI_LAZY(av_log_set_level)(level);
}

WI_HIDDEN void av_max_alloc(size_t max) {
    WI_LAZY(av_max_alloc)(max);
}

WI_HIDDEN void *av_malloc(size_t size) {
    return WI_LAZY(av_malloc)(size);
}

WI_HIDDEN int av_opt_set_int(void *obj, const char *name, int64_t val, int search_flags) {
    return WI_LAZY(av_opt_set_int)(obj, name, val, search_flags);
}

WI_HIDDEN const AVPixFmtDescriptor *av_pix_fmt_desc_get(enum AVPixelFormat pix_fmt) {
    return WI_LAZY(av_pix_fmt_desc_get)(pix_fmt);
}

WI_HIDDEN int64_t av_rescale_q_rnd(int64_t a, AVRational bq, AVRational cq, enum AVRounding rnd) {
    return WI_LAZY(av_rescale_q_rnd)(a, bq, cq, rnd);
}

WI_HIDDEN int av_strerror(int errnum, char *errbuf, size_t errbuf_size) {
    return WI_LAZY(av_strerror)(errnum, errbuf, errbuf_size);
}
