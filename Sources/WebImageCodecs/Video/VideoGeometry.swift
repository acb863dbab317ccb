import CFFmpeg
import Foundation
import WebImageCore

/// How a decoded frame is shown: its sample aspect ratio applied to its width, then the
/// container's display matrix as an orientation, as ffmpeg's command line shows it
/// (`scale=iw*sar:ih` and its `autorotate`).
struct VideoGeometry {
    /// The frame as displayed before the orientation: the coded width times the sample aspect
    /// ratio (truncated, as `scale=iw*sar:ih` does), the coded height.
    var displayWidth: Int
    var displayHeight: Int
    /// How the display matrix turns the frame.
    var orientation: ImageOrientation

    /// The displayed size after the orientation: what a viewer sees, and what thumbnail sizes
    /// are measured on.
    var orientedSize: (width: Int, height: Int) {
        orientation.swapsDimensions ? (displayHeight, displayWidth) : (displayWidth, displayHeight)
    }

    /// The geometry of `frame` from `demuxer`'s stream; the displayed size checked against the limits.
    init(frame: UnsafeMutablePointer<AVFrame>, in demuxer: VideoDemuxer, options: ImageDecodingOptions) throws {
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        // The decoder's own frame size can differ from the container's: checked again.
        try Self.checkSize(width: width, height: height, what: "decoded frame", options: options)
        let ratio = av_guess_sample_aspect_ratio(demuxer.context, demuxer.stream, frame)
        (displayWidth, displayHeight) = Self.displaySize(width: width, height: height, sampleAspectRatio: ratio)
        try Self.checkSize(width: displayWidth, height: displayHeight, what: "displayed frame", options: options)
        orientation = Self.orientation(of: demuxer.stream)
    }

    /// The size to convert the frame to, before the orientation: the thumbnail's size for the
    /// oriented display size, turned back.
    func outputSize(for thumbnail: ImageDecodingOptions.Thumbnail?) -> (width: Int, height: Int) {
        let oriented = orientedSize
        let wanted = thumbnail?.outputSize(width: oriented.width, height: oriented.height) ?? oriented
        return orientation.swapsDimensions ? (wanted.height, wanted.width) : wanted
    }

    /// `width` × `height` with the sample aspect ratio applied to the width (an unknown or
    /// invalid ratio is square). Capped so that a hostile ratio only ever means "too large".
    static func displaySize(width: Int, height: Int, sampleAspectRatio ratio: AVRational) -> (width: Int, height: Int) {
        guard ratio.num > 0, ratio.den > 0 else { return (width, height) }
        let scaled = (Double(width) * Double(ratio.num) / Double(ratio.den)).rounded(.towardZero)
        return (max(1, Int(min(scaled, 1e9))), height)
    }

    /// Throws ``ImageError/tooLarge(_:)`` for a side over ``VideoDemuxer/maximumSide`` or more
    /// pixels than ``ImageDecodingOptions/maximumPixelCount``, ``ImageError/corruptData(_:)`` for none.
    static func checkSize(width: Int, height: Int, what: String, options: ImageDecodingOptions) throws {
        guard width > 0, height > 0 else { throw ImageError.corruptData("video: a \(what) of \(width)×\(height)") }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard width <= VideoDemuxer.maximumSide, height <= VideoDemuxer.maximumSide, !overflow, pixels <= options.maximumPixelCount else {
            throw ImageError.tooLarge("video: a \(what) of \(width)×\(height), over the limit of \(options.maximumPixelCount) pixels and \(VideoDemuxer.maximumSide) a side")
        }
    }

    /// The stream's display matrix as an orientation, as ffmpeg 5.1's `autorotate` reads it: the
    /// rotation rounded to whole degrees; 90° and 270° with the matrix's flip (a transpose or
    /// transverse), 180° as its horizontal and vertical flips, 0° with a vertical flip. Other angles
    /// (which ffmpeg rotates with a fill colour) are not applied.
    static func orientation(of stream: UnsafeMutablePointer<AVStream>) -> ImageOrientation {
        var size = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * MemoryLayout<Int32>.size else {
            return .up
        }
        let matrix = UnsafeRawPointer(data).assumingMemoryBound(to: Int32.self)
        let rotation = av_display_rotation_get(matrix)
        guard rotation.isFinite else { return .up }
        var theta = -rotation.rounded()
        theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
        if abs(theta - 90) < 1 {
            return matrix[3] > 0 ? .leftMirrored : .right
        }
        if abs(theta - 180) < 1 {
            switch (matrix[0] < 0, matrix[4] < 0) {
            case (true, true): return .down
            case (true, false): return .upMirrored
            case (false, true): return .downMirrored
            case (false, false): return .up
            }
        }
        if abs(theta - 270) < 1 {
            return matrix[3] < 0 ? .rightMirrored : .left
        }
        if abs(theta) < 1, matrix[4] < 0 {
            return .downMirrored
        }
        return .up
    }
}
