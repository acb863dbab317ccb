import CFFmpeg
import Foundation
import WebImageCore

/// A decoded frame as 8-bit sRGB RGBA at the size asked, in one libswscale pass.
///
/// - **Scaling**: bicubic (`SWS_BICUBIC`), the flags ffmpeg's command line gives the scaler it
///   inserts, so a full-size poster equals `ffmpeg -i … -frames:v 1 -pix_fmt rgba`'s frame; a
///   thumbnail is scaled from the frame straight to its size (bicubic's kernel widens with the
///   reduction, so a large reduction averages as an area filter would), and non-square pixels
///   are stretched in the same pass.
/// - **Colour**: the frame's matrix (`colorspace`) and range, as ffmpeg's scale filter reads
///   them: an unspecified matrix is BT.601's, libswscale's default, as in ffmpeg's command line.
///   Samples of more than 8 bits are reduced by libswscale. Frames whose transfer is PQ or HLG
///   (HDR) are converted to 16-bit RGB instead and tone-mapped (``VideoToneMapping``).
enum VideoFrameConversion {
    /// `frame` at `width` × `height` (before the orientation), as straight-alpha RGBA.
    static func rgba(_ frame: UnsafeMutablePointer<AVFrame>, width: Int, height: Int, stream: UnsafeMutablePointer<AVStream>) throws -> Bitmap {
        if let transfer = VideoToneMapping.Transfer(frame.pointee.color_trc) {
            let scaled = try scale(frame, width: width, height: height, to: AV_PIX_FMT_RGB48LE)
            let peak = VideoToneMapping.peakLuminance(of: frame, stream: stream)
            return try VideoToneMapping.toneMap(scaled.pointer, transfer: transfer, peakNits: peak)
        }
        let scaled = try scale(frame, width: width, height: height, to: AV_PIX_FMT_RGBA)
        let output = scaled.pointer.pointee
        guard let plane = output.data.0 else { throw ImageError.corruptData("video: the converted frame has no pixels") }
        let stride = Int(output.linesize.0), rowBytes = width * 4
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8) { buffer in
            let out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for row in 0..<height {
                (out + row * rowBytes).update(from: plane + row * stride, count: rowBytes)
            }
        }
    }

    /// `frame` converted by libswscale to `format` at `width` × `height`, into a frame of its own
    /// (FFmpeg's aligned buffers: the same SIMD paths as ffmpeg's command line).
    static func scale(_ frame: UnsafeMutablePointer<AVFrame>, width: Int, height: Int, to format: AVPixelFormat) throws -> VideoFrame {
        let source = frame.pointee
        let sourceFormat = AVPixelFormat(rawValue: source.format)
        guard let context = sws_alloc_context() else { throw ImageError.tooLarge("video: out of memory for the scaler") }
        defer { sws_freeContext(context) }
        let settings = UnsafeMutableRawPointer(context)
        for (name, value) in [
            ("srcw", Int64(source.width)), ("srch", Int64(source.height)), ("src_format", Int64(source.format)),
            ("dstw", Int64(width)), ("dsth", Int64(height)), ("dst_format", Int64(format.rawValue)),
            ("sws_flags", Int64(SWS_BICUBIC)),
        ] {
            _ = av_opt_set_int(settings, name, value, 0)
        }
        // 4:2:0 chroma sited between the rows (MPEG-2's convention), as ffmpeg's scale filter
        // sets it for yuv420p: the same samples when a thumbnail or a non-square frame is scaled.
        if sourceFormat == AV_PIX_FMT_YUV420P {
            _ = av_opt_set_int(settings, "src_v_chr_pos", 128, 0)
        }
        guard sws_init_context(context, nil, nil) >= 0 else {
            let name = av_get_pix_fmt_name(sourceFormat).map { String(cString: $0) } ?? "format \(source.format)"
            throw ImageError.unsupportedFormat("video: libswscale does not convert \(name) frames")
        }
        // The frame's matrix and range (libswscale assumes BT.601 and limited range otherwise;
        // an unspecified matrix stays BT.601, as ffmpeg's command line converts it). RGB
        // sources ignore this.
        let matrix = sws_getCoefficients(Int32(truncatingIfNeeded: source.colorspace.rawValue))
        let fullRange: Int32 = source.color_range == AVCOL_RANGE_JPEG ? 1 : 0
        _ = sws_setColorspaceDetails(context, matrix, fullRange, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)

        let output = try VideoFrame()
        output.pointer.pointee.width = Int32(width)
        output.pointer.pointee.height = Int32(height)
        output.pointer.pointee.format = format.rawValue
        let allocated = av_frame_get_buffer(output.pointer, 0)
        guard allocated >= 0 else { throw ImageError.tooLarge("video: out of memory for a \(width)×\(height) frame") }
        let status = sws_scale_frame(context, output.pointer, frame)
        guard status >= 0 else { throw FFmpegSetup.error(status, doing: "converting the frame") }
        return output
    }
}
