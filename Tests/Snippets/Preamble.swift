// The names the documentation's examples take for granted: the URL being loaded, the manager,
// some bytes, a view to show an image in. Only their types matter (nothing here runs), so the
// values are the simplest that compile. An example that needs anything else declares it.
import Foundation
import Logging
import WebImage
import WebImageServer
import WebImageS3

// MARK: What is being loaded

let url = URL(string: "https://example.com/photo.jpg")!
let urls = [url, URL(string: "https://example.com/b.png")!]
let avatarURL = URL(string: "https://example.com/avatar.png")!
/// A cache key.
let key = url.absoluteString
let etag: String? = "\"abc\""
let token = "secret"

// MARK: The library's objects, as a program would have made them

let manager = ImageManager.shared
let configuration = ImageManager.Configuration.standard(cache: ImageCache(disk: nil))
let registry = CoderRegistry.system()
let decoder: any ImageDecoder = PNGDecoder()
let loader: any ImageLoader = FileImageLoader()
/// A request; `var`, as examples set its processors (never run, so never raced).
nonisolated(unsafe) var request = ImageRequest(url: url)
let binder = ImageBinder(manager: manager, delivery: .immediate)
let prefetcher = ImagePrefetcher(manager: manager)
let task = manager.loadImage(with: request)
/// A memory cache of decoded images by URL string.
let cache = MemoryCache<String, ImageContainer>()
let diskCache = try! DiskCache(directory: URL(fileURLWithPath: "/tmp/snippets"))
let options = ImageDecodingOptions()
let logger = Logger(label: "snippets")

/// An S3 client, for the WebImageS3 examples.
let client = S3Client(configuration: S3Configuration(
    endpoint: URL(string: "http://127.0.0.1:8333")!, region: "us-east-1", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b")))

// MARK: Bytes and images

let bytes = Data()
let data = Data()
let chunk = Data()
let chunks = [Data(), Data()]
/// A download's body, as chunks arriving.
let body = AsyncStream<Data> { $0.finish() }
let bitmap = try! Bitmap(width: 1, height: 1, pixelFormat: .rgba8, pixels: [0, 0, 0, 255])
let photo = bitmap
let container = ImageContainer(image: bitmap)
/// An EXIF block's TIFF payload, and an EXIF block as a PNG or WebP file stores it.
let exifPayload = Data()
let exifChunk = Data()

/// A program's own pixel work, for the processor examples.
func sepia(_ bitmap: Bitmap) throws -> Bitmap { bitmap }
func invertingColours(_ bitmap: Bitmap) throws -> Bitmap { bitmap }
/// A program's own parser, for the custom decoder examples.
func parsePPM(_ data: Data) throws -> (width: Int, height: Int, pixels: [UInt8]) { (1, 1, [0, 0, 0]) }

/// A decoder of the program's own.
struct PPMDecoder: ImageDecoder {
    var formats: Set<ImageFormat> { [] }
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        ImageContainer(image: bitmap)
    }
}

/// Where a program keeps its access tokens.
actor Tokens {
    func current() -> String { "token" }
}
let tokens = Tokens()
/// A placeholder image.
let grey = ImageContainer(image: bitmap)

// MARK: The program's user interface

/// Shows an image (a toolkit's image view would).
func show(_ image: Bitmap?) {}
func show(_ image: ImageContainer?) {}
func show(_ image: ImageContainer?, fade: Duration?) {}
func log(_ item: Any) {}

/// A toolkit's main loop.
struct MainLoop: Sendable {
    func schedule(_ job: @escaping @Sendable () -> Void) {}
}
let mainLoop = MainLoop()

/// A progress bar.
struct ProgressBar: Sendable {
    func update(_ received: Int, _ expected: Int?) {}
    var fraction: Double {
        get { 0 }
        nonmutating set {}
    }
}
let bar = ProgressBar()

/// A toolkit's image view, as an ``ImageTarget``.
final class ImageView: ImageTarget {
    func display(_ display: ImageDisplay) {}
    var image: Bitmap? {
        get { nil }
        set {}
    }
}
let view = ImageView()

/// A row of a list: its image view and the data it shows.
final class Cell: ImageTarget {
    let thumbnail = ImageView()
    func display(_ display: ImageDisplay) {}
}
struct Row: Sendable {
    var url: URL?
    var imageURL: URL? { url }
}
let cell = Cell()
/// Rows that scrolled out of a list's prefetch window.
let rowsThatLeft = [row]

/// A toolkit's image widget.
final class Widget: Sendable {
    func setPixels(_ bitmap: Bitmap?, fade: Duration? = nil) {}
}
let row = Row(url: url)
/// A record of the program's own API: an image's URL and the ThumbHash its server sent with it.
struct Post: Sendable {
    var imageURL: URL?
    var imageThumbHash: String
}
let post = Post(imageURL: url, imageThumbHash: "3OcRJYB4d3h/iIeHeEh3eIhw+j2w")

// MARK: The image proxy

let proxy = try! ImageProxy(configuration: .init())
