import Foundation
import WebImage

/// The page at `/`: the images of the origin folder as responsive thumbnails through the
/// proxy, so a newcomer who opens the address sees it working.
///
/// Each thumbnail is a square `fit=cover` crop with a `srcset` of several widths (the browser
/// picks by layout width and screen density) and `format=auto` (WebP for browsers that take
/// it); each links to a large `contain` version. With a signing key, every URL is signed.
/// Until a thumbnail arrives, its cell shows the image's placeholder (Gallery+Placeholders.swift).
///
/// ```swift
/// let gallery = Gallery(directory: URL(fileURLWithPath: "Demo/images"))
/// let html = gallery.html(signer: nil)
/// ```
package struct Gallery: Sendable {
    /// The folder the images are in; `nil` for an empty gallery.
    package let directory: URL?
    /// The image files, by name, sorted.
    package let names: [String]
    /// The placeholders' cells made so far, by hash.
    let placeholderCells = GalleryPlaceholderCells()
    /// Thumbnail widths offered in each `srcset`.
    package static let widths = [160, 320, 480, 640]

    /// Lists the images directly in `directory` (formats sniffed from the bytes; other files,
    /// hidden files and anything that is not a regular file, such as a FIFO, are left out, and
    /// so are formats outside `formats`, those the proxy refuses: a video without
    /// `--allow-video`). A missing folder gives an empty gallery.
    package init(directory: URL?, formats: Set<ImageFormat>? = nil) {
        self.directory = directory
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            self.names = []
            return
        }
        self.names = names.filter { name in
            guard !name.hasPrefix("."), let head = try? POSIXFile.readRegularFile(directory.appendingPathComponent(name).path, upTo: 64) else { return false }
            guard let format = ImageFormat(sniffing: head) else { return false }
            return formats?.contains(format) ?? true
        }.sorted()
    }

    /// The proxy URL (path and query) of `name` with `parameters`, signed when `signer` is set.
    package static func imageURL(_ name: String, _ parameters: String, signer: URLSigner?) -> String {
        let target = "/image?url=" + percentEncoded("local:///" + name) + "&" + parameters
        return signer?.sign(target) ?? target
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// The page, each image's cell with its placeholder in `placeholders` (by name), if any.
    package func html(signer: URLSigner?, placeholders: [String: Placeholder] = [:]) -> String {
        let figures = names.map { Self.figure($0, signer: signer, placeholder: placeholders[$0]) }
        let body = figures.isEmpty
            ? "<p>No images to show: start the proxy with <code>--origin-dir DIR</code> to see a folder here.</p>"
            : figures.joined(separator: "\n")
        return Self.page(body: body)
    }

    /// One thumbnail: a square crop with a `srcset` of ``widths``, a link to a large version,
    /// and its name under it; behind it, until it loads, `placeholder`.
    private static func figure(_ name: String, signer: URLSigner?, placeholder: Placeholder?) -> String {
        let srcset = widths.map { width in
            "\(escaped(imageURL(name, "w=\(width)&h=\(width)&fit=cover&format=auto", signer: signer))) \(width)w"
        }.joined(separator: ", ")
        let src = escaped(imageURL(name, "w=320&h=320&fit=cover&format=auto", signer: signer))
        let large = escaped(imageURL(name, "w=1600&h=1600&fit=contain&format=auto", signer: signer))
        let drawn = placeholder.map { " data-thumbhash=\"\(escaped($0.thumbHash))\" style=\"background: \(escaped($0.background))\"" } ?? ""
        return """
            <figure><a href="\(large)"><img src="\(src)" srcset="\(srcset)" \
            sizes="(max-width: 600px) 45vw, 240px" width="240" height="240" loading="lazy" \
            alt="\(escaped(name))"\(drawn)></a><figcaption>\(escaped(name))<br><span class="served"></span></figcaption></figure>
            """
    }

    /// The whole page around `body` (the figures, or why there are none).
    private static func page(body: String) -> String {
        """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>swift-web-image proxy</title>
            <style>
            body { font: 16px/1.4 system-ui, sans-serif; margin: 2rem; color: #222; background: #fafafa; }
            main { display: grid; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); gap: 1rem; }
            figure { margin: 0; }
            img { width: 100%; height: auto; aspect-ratio: 1; object-fit: cover; border-radius: 6px; display: block;
                  background: repeating-conic-gradient(#c8c8c8 0 25%, #eee 0 50%) 0 0 / 16px 16px; }
            figcaption { font-size: 0.8rem; color: #666; overflow-wrap: anywhere; }
            code { background: #eee; padding: 0 0.2em; }
            </style>
            </head>
            <body>
            <h1>swift-web-image proxy</h1>
            <p>Each thumbnail is served by <code>/image</code>: resized, cropped and encoded on the fly \
            (AVIF or WebP where your browser takes it), then cached. Under each, the format and size \
            it was served in. Click one for a large version.</p>
            <main>
            \(body)
            </main>
            \(script)
            </body>
            </html>

            """
    }

    /// The page's script: it counts the thumbnails loaded (on `<body data-images-loaded="N/M">`),
    /// takes each one's placeholder away once it has loaded (the checkerboard, not a blurred
    /// picture, belongs behind a transparent image), and writes under each the format and size
    /// it was served in.
    private static let script = """
        <script>
        // How many thumbnails have loaded, on <body data-images-loaded="N/M">: what the
        // headless-browser check (scripts/check-gallery.sh) reads.
        function countLoaded() {
          const images = [...document.images];
          document.body.dataset.imagesLoaded = images.filter(i => i.complete && i.naturalWidth > 0).length + "/" + images.length;
        }
        // The format and bytes a thumbnail was served in: a HEAD of the same URL with the
        // Accept a browser sends for images (the answer comes from the proxy's memory).
        async function describe(image) {
          const label = image.closest("figure").querySelector(".served");
          try {
            const reply = await fetch(image.currentSrc, { method: "HEAD", headers: { Accept: "image/avif,image/webp,image/apng,image/*,*/*;q=0.8" } });
            const bytes = Number(reply.headers.get("Content-Length") || 0);
            label.textContent = (reply.headers.get("Content-Type") || "?").replace("image/", "") + " · " + (bytes / 1024).toFixed(1) + " KB";
          } catch (error) {
            label.textContent = "";
          }
        }
        function loaded(image) {
          image.style.background = "";
          describe(image);
        }
        for (const image of document.images) {
          image.addEventListener("load", () => { countLoaded(); loaded(image); });
          image.addEventListener("error", countLoaded);
          if (image.complete && image.naturalWidth > 0) loaded(image);
        }
        countLoaded();
        </script>
        """

    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
