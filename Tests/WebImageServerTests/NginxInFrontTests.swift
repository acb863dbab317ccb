import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// nginx from Debian, on loopback, as the HTTP cache in front of two `webimage serve`
/// instances: the set-up the README recommends for scaling out. `make test` installs nginx
/// (scripts/deps.sh); without it the suite is skipped with that reason.
@Suite(
    "nginx in front of two proxies",
    .enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"),
    .enabled(if: Nginx.executable != nil, "nginx is not installed (make test installs nginx-light)")
)
struct NginxInFrontTests {
    func get(_ url: String, accept: String) async throws -> (status: Int, cacheStatus: String?, etag: String?, body: Data) {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: accept)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
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
            #expect(ImageFormat(sniffing: reply.body) == .webp)
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

/// An nginx process of the test's own: a caching reverse proxy on a free loopback port in front
/// of `upstreams`, single-process (`master_process off`), so it needs no other user's rights and
/// spreads requests strictly round robin.
struct Nginx {
    static let executable: URL? = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .map(URL.init(fileURLWithPath:))
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    let process: Process
    let port: Int

    /// Starts nginx and returns once it accepts connections.
    static func start(prefix: URL, upstreams: [Int]) async throws -> Nginx {
        // The free port can be taken by a server another test starts before nginx binds it:
        // nginx then exits, and a new port is tried.
        for _ in 0..<3 {
            let nginx = try Nginx(prefix: prefix, upstreams: upstreams)
            // nginx says nothing when it is ready: connect (yielding, never sleeping) until it
            // accepts, or it exits.
            let process = nginx.process, port = nginx.port
            if await yieldUntil({ !process.isRunning || LoopbackPort.accepts(port) }), process.isRunning {
                return nginx
            }
            nginx.stop()
        }
        throw NginxError.notListening
    }

    private init(prefix: URL, upstreams: [Int]) throws {
        process = Process()
        let executable = try #require(Self.executable)
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("cache"), withIntermediateDirectories: true)
        guard let port = LoopbackPort.free() else { throw NginxError.notListening }
        self.port = port
        let servers = upstreams.map { "        server 127.0.0.1:\($0);" }.joined(separator: "\n")
        let configuration = """
            master_process off;
            daemon off;
            worker_processes 1;
            pid \(prefix.path)/nginx.pid;
            error_log \(prefix.path)/error.log warn;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(prefix.path)/body;
                proxy_temp_path \(prefix.path)/proxy;
                fastcgi_temp_path \(prefix.path)/fastcgi;
                uwsgi_temp_path \(prefix.path)/uwsgi;
                scgi_temp_path \(prefix.path)/scgi;
                proxy_cache_path \(prefix.path)/cache levels=1:2 keys_zone=images:1m max_size=64m inactive=1d use_temp_path=off;
                upstream proxies {
            \(servers)
                }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://proxies;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_cache images;
                        proxy_cache_lock on;
                        add_header X-Cache-Status $upstream_cache_status always;
                    }
                }
            }
            """
        let file = prefix.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process.executableURL = executable
        process.arguments = ["-p", prefix.path, "-c", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func stop() {
        guard process.isRunning else { return }
        // SIGKILL: a process spawned from the test runner's threads inherits their blocked
        // signal mask, and nginx without a master process never unblocks SIGTERM. Nothing of
        // this nginx needs a graceful end.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

enum NginxError: Error {
    case notListening
}
