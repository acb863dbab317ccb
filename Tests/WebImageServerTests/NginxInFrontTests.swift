import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// nginx from Debian, on loopback, as the HTTP cache in front of two `webimage serve`
/// instances: the set-up NginxInFront.md (the proxy catalog) recommends for scaling out. `make test` installs nginx
/// (scripts/deps.sh); without it the suite is skipped with that reason.
@Suite(
    "nginx in front of two proxies",
    .enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"),
    .enabled(if: Requirement.met(Nginx.executable != nil), "nginx is not installed (make test installs nginx-light)")
)
struct NginxInFrontTests {
    func get(_ url: String, accept: String) async throws -> (status: Int, cacheStatus: String?, etag: String?, body: Data) {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: accept)
        let response = try await HTTPClient.tests.execute(request, timeout: .seconds(60 * Int64(Deadlines.stretch)))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), response.headers.first(name: "X-Cache-Status"), response.headers.first(name: "ETag"), Data(body.readableBytesView))
    }

    /// The request lines an instance logged for `/image`.
    func imageRequests(_ server: ServeProcess) -> Int {
        server.stderr.filter { $0.contains(#""msg":"request""#) && $0.contains(#""path":"/image""#) }.count
    }

    @Test("a repeated variant is served from nginx's cache without reaching either instance")
    func repeatedVariantsStayInNginx() async throws {
        let folder = TemporaryDirectory("nginx-front")
        defer { folder.remove() }
        let executable = try #require(WebImageExecutable.url)
        let instances = try (0..<2).map { index in
            try ServeProcess(executable, ["serve", "--port", "0", "--origin-dir", "Demo/images", "--cache-dir", folder.path + "/cache-\(index)"])
        }
        defer { for instance in instances { instance.terminate() } }
        var ports: [Int] = []
        for instance in instances { ports.append(try await instance.port()) }

        let nginx = try await Nginx.start(prefix: folder.url.appendingPathComponent("nginx"), upstreams: ports)
        defer { nginx.stop() }
        let base = "http://127.0.0.1:\(nginx.port)"
        let variants = [
            ("/image?url=local%3A%2F%2F%2Fflower.webp&w=120", "image/webp,image/*"),
            ("/image?url=local%3A%2F%2F%2Fthumb-Kite.jpg&w=200&fit=cover&h=100", "image/avif,image/webp,*/*"),
        ]

        // First time: each variant goes through nginx to one instance, round robin.
        var first: [Data] = []
        for (path, accept) in variants {
            let reply = try await get(base + path, accept: accept)
            #expect(reply.status == 200)
            #expect(reply.cacheStatus == "MISS")
            // AVIF first when Accept names it (the proxy's default autoFormats).
            #expect(ImageFormat(sniffing: reply.body) == (accept.contains("image/avif") ? .avif : .webp))
            first.append(reply.body)
        }
        #expect(instances.map(imageRequests) == [1, 1])

        // Again, several times: nginx answers from its cache, the instances see nothing.
        for _ in 0..<3 {
            for ((path, accept), body) in zip(variants, first) {
                let reply = try await get(base + path, accept: accept)
                #expect(reply.status == 200)
                #expect(reply.cacheStatus == "HIT")
                #expect(reply.body == body)
                #expect(reply.etag != nil)
            }
        }
        #expect(instances.map(imageRequests) == [1, 1])

        // The proxy says its output depends on Accept: a client without WebP gets its own
        // variant (a JPEG), made by an instance, not the WebP from the cache.
        let jpeg = try await get(base + variants[1].0, accept: "image/jpeg")
        #expect(jpeg.status == 200)
        #expect(ImageFormat(sniffing: jpeg.body) == .jpeg)
        #expect(instances.map(imageRequests).reduce(0, +) == 3)
    }
}
