import CFFmpeg
import Foundation
import WebImageCore

/// What `webimage info` says of a video: its displayed size, time and coding.
package struct VideoInfo: Sendable, Hashable {
    /// The size a viewer sees: the sample aspect ratio and the rotation applied.
    package var width: Int
    package var height: Int
    /// Seconds, when the container states it.
    package var duration: TimeInterval?
    /// Frames per second, when the container states it.
    package var frameRate: Double?
    /// FFmpeg's short name of the codec: `h264`, `hevc`, `vp8`, `vp9`, `av1`, `mjpeg`….
    package var codec: String
    /// The frame count the container claims (Matroska states none).
    package var frameCount: Int?
    /// Bits per sample of the decoded frames (8, 10, 12).
    package var bitDepth: Int?
    /// The HDR transfer (`smpte2084` for PQ, `arib-std-b67` for HLG), `nil` for SDR.
    package var hdrTransfer: String?
    /// How the container's display matrix turns the frames.
    package var orientation: ImageOrientation
}

extension VideoDecoder {
    /// The video's size, time and coding, from its headers and its first frame's decode (the
    /// containers state neither the bit depth nor the transfer reliably: the frame does), under
    /// the same limits and with the same isolation as ``decode(_:options:)``.
    ///
    /// - Throws: ``ImageError`` as ``decode(_:options:)`` does.
    package static func probe(_ data: Data, options: ImageDecodingOptions) throws -> VideoInfo {
        try data.withUnsafeBytes { bytes in
            try VideoDemuxer.with(bytes, options: options) { demuxer in
                let frame = try VideoFrameReader.frame(at: 0, in: demuxer, options: options)
                let geometry = try VideoGeometry(frame: frame.pointer, in: demuxer, options: options)
                let size = geometry.orientedSize
                let format = AVPixelFormat(rawValue: frame.pointer.pointee.format)
                let depth = av_pix_fmt_desc_get(format).map { Int($0.pointee.comp.0.depth) }
                let transfer = VideoToneMapping.Transfer(frame.pointer.pointee.color_trc)
                return VideoInfo(
                    width: size.width, height: size.height, duration: demuxer.duration, frameRate: demuxer.frameRate,
                    codec: demuxer.codecName, frameCount: demuxer.frameCount, bitDepth: depth,
                    hdrTransfer: transfer?.name, orientation: geometry.orientation)
            }
        }
    }
}
