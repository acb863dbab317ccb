import Foundation
import HTTPTypes
import Testing
import WebImage
@testable import WebImageServer

/// imgproxy's URL grammar, options and signatures, without a server.
@Suite struct ImgproxyURLTests {
    func parse(_ path: String, presets: [String: String] = [:], local: Bool = true, now: Date = Date()) throws -> ImgproxyURL {
        try ImgproxyURL(path: path[...], presets: presets, limits: ImageProxy.Limits(), allowsLocal: local, now: now)
    }

    /// The status and message of a refused `path`.
    func refusal(_ path: String, presets: [String: String] = [:], local: Bool = true) -> (Int, String)? {
        do {
            _ = try parse(path, presets: presets, local: local)
            return nil
        } catch let error as ProxyError {
            return (error.status, error.message)
        } catch {
            return (0, "\(error)")
        }
    }

    /// imgproxy's documentation ("Signing a URL"): key `secret` and salt `hello` in hex sign its
    /// example path to `oKfUtW34…XH8` (checked with Python's hmac too).
    @Test func imgproxysDocumentedSignature() throws {
        let signer = try #require(ImgproxySigner(key: "736563726574", salt: "68656C6C6F"))
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        #expect(signer.signature(for: path) == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        #expect(signer.sign(path) == "/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8" + path)
        #expect(signer.isValid(signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", path: path))
        // Padded, or in the standard alphabet: the same MAC, another URL for a CDN keyed on the
        // URL (hostile-input finding 8), so refused.
        #expect(!signer.isValid(signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8=", path: path))
        #expect(!signer.isValid(signature: "oKfUtW34Dvo2BGQehJFR4Nr0/rIjOtdtzJ3QFsUcXH8", path: path))
        #expect(!signer.isValid(signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", path: path + "x"))
        #expect(!signer.isValid(signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH0", path: path))
        // The same bits but for the unused low ones of the last character: not the canonical text.
        #expect(!signer.isValid(signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH9", path: path))
        #expect(!signer.isValid(signature: "insecure", path: path))
        // The pair of the older documentation (its examples folder), computed with Python's hmac.
        let older = try #require(ImgproxySigner(
            key: "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881",
            salt: "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"))
        #expect(older.signature(for: path) == "90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40")
    }

    /// `IMGPROXY_SIGNATURE_SIZE`: the MAC's first bytes only (Python: `digest[:8]`).
    @Test func truncatedSignatures() throws {
        let signer = try #require(ImgproxySigner(
            key: "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881",
            salt: "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5", signatureSize: 8))
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        #expect(signer.signature(for: path) == "90UxdwGRAI0")
        #expect(signer.isValid(signature: "90UxdwGRAI0", path: path))
        #expect(!signer.isValid(signature: "90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40", path: path))
        #expect(!signer.isValid(signature: "90UxdwGRAJ0", path: path))
        #expect(!signer.isValid(signature: "90UxdwGRAI1", path: path))
        #expect(ImgproxySigner(key: "zz", salt: "00") == nil)
        #expect(ImgproxySigner(key: "abc", salt: "00") == nil)
        #expect(ImgproxySigner(key: "", salt: "00") == nil)
        #expect(ImgproxySigner(key: "00", salt: "00", signatureSize: 33) == nil)
        #expect(ImgproxySigner(key: "00", salt: "00", signatureSize: 0) == nil)
    }

    /// imgproxy's `page` counts from 0, ours from 1; `video_thumbnail_second` is the poster's time.
    @Test func pageAndVideoThumbnailSecond() throws {
        let url = try parse("/insecure/pg:2/vts:7.5/rs:fit:300:0/plain/http://example.com/a.pdf")
        #expect(url.recipe.page == 3 && url.recipe.videoTime == 7.5)
        let long = try parse("/insecure/page:0/video_thumbnail_second:0/plain/http://example.com/a.mp4")
        #expect(long.recipe.page == 1 && long.recipe.videoTime == 0)
        #expect(refusal("/insecure/pg:-1/plain/http://example.com/a.pdf")?.0 == 400)
        #expect(refusal("/insecure/vts:x/plain/http://example.com/a.mp4")?.0 == 400)
    }

    @Test func plainAndBase64Sources() throws {
        let plain = try parse("/insecure/rs:fit:300:200/plain/http://example.com/images/curiosity.jpg@png")
        #expect(plain.recipe.source == .remote(URL(string: "http://example.com/images/curiosity.jpg")!))
        #expect(plain.recipe.format == .png)
        let encoded = try parse("/insecure/plain/http%3A%2F%2Fexample.com%2Fa%20b.jpg%3Fv%3D1")
        #expect(encoded.recipe.source == .remote(URL(string: "http://example.com/a%20b.jpg?v=1")!))
        #expect(encoded.recipe.format == nil)
        // imgproxy's own example source, split by / and with an extension.
        let split = try parse("/_/rs:fill:300:400:0/g:no/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.webp")
        #expect(split.recipe.source == .remote(URL(string: "http://example.com/images/curiosity.jpg")!))
        #expect(split.recipe.format == .webp && split.recipe.box == .fill && split.recipe.width == 300 && split.recipe.height == 400)
        let whole = try parse("/x/aHR0cDovL2V4YW1wbGUuY29tL2ltYWdlcy9jdXJpb3NpdHkuanBn")
        #expect(whole.recipe.source == .remote(URL(string: "http://example.com/images/curiosity.jpg")!))
        #expect(try parse("/insecure/plain/local:///photo.jpg").recipe.source == .local("photo.jpg"))
        #expect(try parse("/insecure/" + Self.base64("local:///a/b.png")).recipe.source == .local("a/b.png"))
    }

    /// The same statuses as `/image`: 400 for what is wrong with the URL, with what it is.
    @Test func badURLs() {
        #expect(refusal("/insecure/plain/local:///../x.jpg")?.0 == 400)
        #expect(refusal("/insecure/plain/local:///a/../../x.jpg")?.0 == 400)
        #expect(refusal("/insecure/" + Self.base64("local:///../etc/passwd"))?.0 == 400)
        #expect(refusal("/insecure/plain/local:///photo.jpg", local: false)?.1 == "local:// sources need --origin-dir")
        // Truncated base64 (one character past a whole group), and not base64 at all.
        #expect(refusal("/insecure/aHR0cDovL2V4YW1wbGUuY29tL2Eua")?.0 == 400)
        #expect(refusal("/insecure/aHR0cDovL2V4YW1w/bGUuY29tL2Eua.jpg")?.1 == "the source is not valid URL-safe Base64")
        #expect(refusal("/insecure/a*b")?.0 == 400)
        #expect(refusal("/insecure/nope:1/plain/http://example.com/a.jpg")?.1 == "option nope is not supported")
        #expect(refusal("/insecure/w:99999/plain/http://example.com/a.jpg")?.1 == "w takes an integer from 0 to 4096")
        #expect(refusal("/insecure/rs:fit:-5/plain/http://example.com/a.jpg")?.0 == 400)
        #expect(refusal("/insecure/rs:stretch:5/plain/http://example.com/a.jpg")?.0 == 400)
        #expect(refusal("/insecure/q:101/plain/http://example.com/a.jpg")?.0 == 400)
        #expect(refusal("/insecure/dpr:9/plain/http://example.com/a.jpg")?.0 == 400)
        #expect(refusal("/insecure/w:3000/dpr:2/plain/http://example.com/a.jpg")?.1 == "width × dpr × zoom must be at most 4096")
        #expect(refusal("/insecure/rot:45/plain/http://example.com/a.jpg")?.1 == "rot takes a multiple of 90")
        #expect(refusal("/insecure/el:maybe/plain/http://example.com/a.jpg")?.0 == 400)
        #expect(refusal("/insecure/f:tiff/plain/http://example.com/a.jpg")?.0 == 400)
        #expect(refusal("/insecure/plain/http://example.com/a.jpg@tiff")?.0 == 400)
        #expect(refusal("/insecure/plain/ftp://example.com/a.jpg")?.0 == 400)
        #expect(refusal("/insecure/enc/abcdef")?.1 == "encrypted source URLs are not supported")
        #expect(refusal("/insecure")?.0 == 400)
        #expect(refusal("/insecure/rs:fit:10:10")?.0 == 400)
        #expect(refusal("/insecure/pr:missing/plain/http://example.com/a.jpg")?.1 == "unknown preset missing")
        #expect(refusal("/insecure/pr:a/plain/http://example.com/a.jpg", presets: ["a": "pr:a"])?.1 == "presets nest too deep")
    }

    /// What is left out answers 400 naming it; at its "off" value it is accepted.
    @Test func unsupportedOptionsAreNamed() throws {
        let source = "/plain/http://example.com/a.jpg"
        let named = [
            ("wm:0.5:ce", "watermark: no watermark image is configured (IMGPROXY_WATERMARK_DATA, _PATH or _URL)"),
            ("g:no:10:0", "gravity offsets are not supported"),
            ("z:1:2", "z with two different factors is not supported"),
            ("sm:0", "sm:false (keeping metadata) is not supported"),
            ("adjust:10:1:1", "option adjust is not supported"), ("ar:1", "option ar is not supported"),
        ]
        for (option, message) in named {
            #expect(refusal("/insecure/" + option + source)?.1 == message, "\(option)")
        }
        for option in ["wm:0", "mb:0", "pix:0", "sh:0", "mw:0", "mh:0", "sm:1", "strip_metadata:true", "cb:abc", "cachebuster:1", "g:no:0:0", "z:1:1"] {
            #expect(refusal("/insecure/" + option + source) == nil, "\(option)")
        }
    }

    /// `sharpen`/`sh` and `pixelate`/`pix` reach the recipe; 0 is off (no key, no processor);
    /// out of range or malformed is a 400 naming the option.
    @Test func sharpenAndPixelate() throws {
        let source = "/plain/http://example.com/a.jpg"
        #expect(try parse("/insecure/sh:0.5" + source).recipe.sharpenSigma == 0.5)
        #expect(try parse("/insecure/sharpen:2" + source).recipe.sharpenSigma == 2)
        #expect(try parse("/insecure/pix:8" + source).recipe.pixelate == 8)
        #expect(try parse("/insecure/pixelate:3" + source).recipe.pixelate == 3)
        let off = try parse("/insecure/w:10/sh:0/pix:0" + source).recipe
        #expect(off.sharpenSigma == 0 && off.pixelate == 0)
        let without = try parse("/insecure/w:10" + source).recipe
        #expect(off.variantKey(format: "source") == without.variantKey(format: "source"))
        #expect(ImageProxy.processors(for: off, maximumDimension: 4096).1.count == ImageProxy.processors(for: without, maximumDimension: 4096).1.count)
        let on = try parse("/insecure/w:10/sh:1/pix:4" + source).recipe
        #expect(on.variantKey(format: "source").contains("sh=1") && on.variantKey(format: "source").contains("pix=4"))
        let identifiers = ImageProxy.processors(for: on, maximumDimension: 4096).1.map(\.identifier)
        #expect(identifiers.contains("imgproxy-sharpen(1)") && identifiers.contains("imgproxy-pixelate(4)"))
        for (option, message) in [
            ("sh:-1", "sh takes a number from 0 to 100"), ("sh:101", "sh takes a number from 0 to 100"),
            ("sharpen:x", "sharpen takes a number from 0 to 100"), ("sh:1:2", "sh takes 1 argument"),
            ("pix:1.5", "pix takes an integer from 0 to 4096"), ("pix:5000", "pix takes an integer from 0 to 4096"),
            ("pixelate:", "pixelate takes an integer from 0 to 4096"),
        ] {
            #expect(refusal("/insecure/" + option + source)?.1 == message, "\(option)")
            #expect(refusal("/insecure/" + option + source)?.0 == 400, "\(option)")
        }
    }

    @Test func everyOptionReachesTheRecipe() throws {
        let url = try parse(
            "/insecure/rs:fill-down:300:200:1:1:so/g:fp:0.25:0.75/c:0.5:0.5:nowe/pd:1:2:3:4/rot:0/fl:1:0/bg:255:0:10/"
                + "bl:2.5/scp:1/q:55/fq:webp:40:jpg:70/f:webp/fn:photo/att:1/exp:4000000000/dpr:2/plain/http://example.com/a.jpg")
        let recipe = url.recipe
        #expect(recipe.box == .fillDown && recipe.upscale)
        #expect(recipe.width == 600 && recipe.height == 400)
        // Flipped horizontally: the focus point and the crop's gravity are mirrored into the source.
        #expect(recipe.focus == .init(x: 0.75, y: 0.75))
        #expect(recipe.sizedCrop == .init(width: 0.5, height: 0.5, alignment: .init(horizontal: 2, vertical: 0)))
        #expect(recipe.flipHorizontal && !recipe.flipVertical && recipe.quarterTurns == 0)
        #expect(recipe.canvas == .init(width: 600, height: 400, alignment: .init(horizontal: 1, vertical: 2), padding: [2, 4, 6, 8], background: [255, 0, 10]))
        #expect(recipe.blur == 2.5 && recipe.stripsICC && recipe.quality == 55 && recipe.format == .webp)
        #expect(recipe.formatQuality == [.webp: 40, .jpeg: 70])
        #expect(url.filename == "photo" && url.returnsAttachment)
        #expect(url.expires != nil)
        #expect(recipe.dialect == "imgproxy")
        // Long names and size's partial arguments: an empty argument keeps what was set.
        let long = try parse("/insecure/resizing_type:force/width:100/height:50/size::60/enlarge:true/gravity:soea/quality:90/format:png/plain/http://example.com/a.jpg")
        #expect(long.recipe.box == .stretch && long.recipe.width == 100 && long.recipe.height == 60 && long.recipe.upscale)
        #expect(long.recipe.alignment == .init(horizontal: 2, vertical: 2) && long.recipe.quality == 90 && long.recipe.format == .png)
        #expect(try parse("/insecure/bg:ff8000/plain/http://example.com/a.jpg").recipe.canvas?.background == [255, 128, 0])
        #expect(try parse("/insecure/pd:5/plain/http://example.com/a.jpg").recipe.canvas?.padding == [5, 5, 5, 5])
        #expect(try parse("/insecure/pd:5:6/plain/http://example.com/a.jpg").recipe.canvas?.padding == [5, 6, 5, 6])
        #expect(try parse("/insecure/ex:1/plain/http://example.com/a.jpg").recipe.canvas == .init())
        // Zoom multiplies the box; without one, the image.
        #expect(try parse("/insecure/w:100/z:1.5/plain/http://example.com/a.jpg").recipe.width == 150)
        #expect(try parse("/insecure/z:0.5/plain/http://example.com/a.jpg").recipe.proportion == 0.5)
        #expect(try parse("/insecure/z:2/plain/http://example.com/a.jpg").recipe.proportion == 1)
        #expect(try parse("/insecure/z:2/el:1/plain/http://example.com/a.jpg").recipe.proportion == 2)
    }

    /// imgproxy turns (clockwise) and flips before it resizes: the box, the gravity and the crop
    /// are of the shown image, so the recipe (which turns last) swaps and maps them.
    @Test func rotationSwapsTheBoxAndMapsTheGravity() throws {
        let turned = try parse("/insecure/rs:fill:300:100/g:ea/rot:90/plain/http://example.com/a.jpg").recipe
        #expect(turned.width == 100 && turned.height == 300 && turned.quarterTurns == 1)
        // East of the shown image is north of the source turned a quarter clockwise.
        #expect(turned.alignment == .init(horizontal: 1, vertical: 0))
        let back = try parse("/insecure/rs:fill:300:100/g:ea/rot:270/plain/http://example.com/a.jpg").recipe
        #expect(back.alignment == .init(horizontal: 1, vertical: 2) && back.quarterTurns == 3)
        let half = try parse("/insecure/g:nowe/rot:-180/plain/http://example.com/a.jpg").recipe
        #expect(half.alignment == .init(horizontal: 2, vertical: 2) && half.quarterTurns == 2)
        // A horizontal flip after a quarter turn is a vertical one before it.
        let flipped = try parse("/insecure/rot:90/fl:1:0/plain/http://example.com/a.jpg").recipe
        #expect(!flipped.flipHorizontal && flipped.flipVertical)
    }

    @Test func presetsApplyInPlaceAndDefaultFirst() throws {
        let presets = try ImgproxyConfiguration.presets(parsing: "default=q:60/f:png, thumb=rs:fill:50:50/g:no,big=w:900")
        #expect(presets == ["default": "q:60/f:png", "thumb": "rs:fill:50:50/g:no", "big": "w:900"])
        let url = try parse("/insecure/pr:thumb/q:70/plain/http://example.com/a.jpg", presets: presets)
        #expect(url.recipe.quality == 70 && url.recipe.format == .png)
        #expect(url.recipe.box == .fill && url.recipe.width == 50 && url.recipe.alignment == .init(horizontal: 1, vertical: 0))
        #expect(try parse("/insecure/preset:thumb:big/plain/http://example.com/a.jpg", presets: presets).recipe.width == 900)
        #expect(throws: ProxyError.self) { try ImgproxyConfiguration.presets(parsing: "nothing") }
        #expect(throws: ProxyError.self) { try ImgproxyConfiguration.presets(parsing: "a=") }
        // Options are checked here, not at every URL that names the preset.
        #expect(throws: ProxyError.badRequest("preset a: option nope is not supported")) { try ImgproxyConfiguration.presets(parsing: "a=nope:1") }
        #expect(throws: ProxyError.badRequest("preset a: unknown preset b")) { try ImgproxyConfiguration.presets(parsing: "a=pr:b") }
        #expect(try ImgproxyConfiguration.presets(parsing: "a=pr:b,b=w:5000") == ["a": "pr:b", "b": "w:5000"])
    }

    /// An expired URL answers 404, as imgproxy does; until then its answers are kept no longer
    /// than what remains (nor than the proxy's own `max-age`), and say how to save them.
    @Test func expires() throws {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let url = try parse("/insecure/exp:1000060/fn:photo/plain/http://example.com/a.jpg", now: now)
        #expect(url.expires == 1_000_060)
        let headers = url.headers
        #expect(!headers.hasExpired(at: now) && headers.hasExpired(at: now + 60))
        var head = HTTPResponse(status: .ok, headerFields: [.cacheControl: "public, max-age=3600", .contentType: "image/webp"])
        headers.apply(to: &head, isComplete: true, now: now, ceiling: 3600)
        #expect(head.headerFields[.cacheControl] == "public, max-age=60")
        #expect(head.headerFields[.contentDisposition] == #"inline; filename="photo.webp""#)
        headers.apply(to: &head, isComplete: true, now: now + 20, ceiling: 30)
        #expect(head.headerFields[.cacheControl] == "public, max-age=30")
        // A partial image (an animation cut short) keeps its `no-store`.
        var partial = HTTPResponse(status: .ok, headerFields: [.cacheControl: "no-store"])
        headers.apply(to: &partial, isComplete: false, now: now, ceiling: 3600)
        #expect(partial.headerFields[.cacheControl] == "no-store")
        do {
            _ = try parse("/insecure/exp:999999/plain/http://example.com/a.jpg", now: now)
            Issue.record("an expired URL was accepted")
        } catch let error as ProxyError {
            #expect(error.status == 404)
        }
    }

    /// The same pixels asked through `/image` and through imgproxy are one variant key.
    @Test func sharedVariantKeys() throws {
        let image = try ProxyRequest(query: "url=http%3A%2F%2Fexample.com%2Fa.jpg&w=300&h=200&format=jpeg")
        let imgproxy = try parse("/insecure/rs:fit:300:200/f:jpg/plain/http://example.com/a.jpg").recipe
        #expect(imgproxy.variantKey(format: "jpeg") == image.recipe.variantKey(format: "jpeg"))
        let cover = try ProxyRequest(query: "url=http%3A%2F%2Fexample.com%2Fa.jpg&w=150&h=100&dpr=2&fit=cover&format=webp")
        let fill = try parse("/insecure/rs:fill:150:100/dpr:2/" + Self.base64("http://example.com/a.jpg") + ".webp").recipe
        #expect(fill.variantKey(format: "webp") == cover.recipe.variantKey(format: "webp"))
        // And what differs, differs.
        let south = try parse("/insecure/rs:fill:300:200/g:so/f:webp/plain/http://example.com/a.jpg").recipe
        #expect(south.variantKey(format: "webp") != fill.variantKey(format: "webp"))
    }

    /// The geometry of the resizing types imgproxy documents, on a 400×200 image.
    @Test func resizingTypesPlan() throws {
        func plan(_ options: String, _ width: Int = 400, _ height: Int = 200) throws -> String {
            let recipe = try parse("/insecure/" + options + "/plain/http://example.com/a.jpg").recipe
            let plan = RecipeGeometry(recipe, maximumDimension: 4096).plan(width: width, height: height)
            return "\(plan.window.x),\(plan.window.y),\(plan.window.width)x\(plan.window.height)→\(plan.size.width)x\(plan.size.height)"
        }
        #expect(try plan("rs:fit:100:100") == "0,0,400x200→100x50")
        #expect(try plan("rs:fill:100:100") == "100,0,200x200→100x100")
        #expect(try plan("rs:fill:100:100/g:we") == "0,0,200x200→100x100")
        #expect(try plan("rs:fill:100:100/g:fp:0.9:0.5") == "200,0,200x200→100x100")
        #expect(try plan("rs:force:100:100") == "0,0,400x200→100x100")
        // Too small to fill 800×800 without enlarging: fill keeps what there is, fill-down the box's shape.
        #expect(try plan("rs:fill:800:800") == "0,0,400x200→400x200")
        #expect(try plan("rs:fill-down:800:800") == "100,0,200x200→200x200")
        #expect(try plan("rs:fill-down:100:100") == "100,0,200x200→100x100")
        // auto: both landscape → fill; a portrait box → fit.
        #expect(try plan("rs:auto:200:50") == "0,50,400x100→200x50")
        #expect(try plan("rs:auto:50:100") == "0,0,400x200→50x25")
        #expect(try plan("rs:fit:800:800/el:1") == "0,0,400x200→800x400")
        // A sized crop: under 1 a fraction, 0 the whole side, from 1 on pixels.
        func window(_ crop: String) throws -> String {
            let recipe = try parse("/insecure/c:" + crop + "/plain/http://example.com/a.jpg").recipe
            let window = RecipeGeometry.window(try #require(recipe.sizedCrop), width: 400, height: 200)
            return "\(window.x),\(window.y),\(window.width)x\(window.height)"
        }
        #expect(try window("0.5:0") == "100,0,200x200")
        #expect(try window("1:1:nowe") == "0,0,1x1")
        #expect(try window("0.25:0.5:soea") == "300,100,100x100")
        #expect(try window("1000:50:so") == "0,150,400x50")
    }

    static func base64(_ text: String) -> String {
        ImgproxySigner.base64URL(Data(text.utf8))
    }
}
