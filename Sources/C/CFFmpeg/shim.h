// FFmpeg (Debian 12: 5.1) for VideoDecoder: the demuxers over a custom AVIOContext, the video
// decoders, the scaler, and the utilities for the display matrix, options and HDR metadata.
// Headers only: the libraries are not linked, CLazyLibraries opens them when the first video is
// (a function called from Swift needs its forwarder there).
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/dict.h>
#include <libavutil/pixdesc.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/error.h>

// AVERROR(e) is a macro over an expression Swift does not import: the codes VideoDecoder returns
// from its callbacks and compares against.
static const int wi_averror_eagain = AVERROR(EAGAIN);
static const int wi_averror_eperm = AVERROR(EPERM);
static const int wi_averror_eof = AVERROR_EOF;
static const int wi_averror_exit = AVERROR_EXIT;
static const int wi_averror_invaliddata = AVERROR_INVALIDDATA;
static const int wi_averror_enomem = AVERROR(ENOMEM);
// AV_NOPTS_VALUE is a cast Swift does not import either.
static const int64_t wi_nopts_value = AV_NOPTS_VALUE;
static const int wi_averror_einval = AVERROR(EINVAL);
