import Foundation
import Testing
import WebImageTestSupport

/// An nginx process of the test's own: a caching reverse proxy on a free loopback port in front
/// of `upstreams`, single-process (`master_process off`), so it needs no other user's rights and
/// spreads requests strictly round robin.
struct Nginx {
    static let executable: URL? = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .map(URL.init(fileURLWithPath:))
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    let process: SpawnedProcess
    let port: Int
    let prefix: URL

    /// Starts nginx as a caching proxy in front of `upstreams` and returns once it accepts
    /// connections.
    static func start(prefix: URL, upstreams: [Int]) async throws -> Nginx {
        try await start(prefix: prefix, role: .cache(upstreams: upstreams))
    }

    /// Starts nginx as a static origin serving `root`, with an access log (``requestedPaths()``).
    static func startOrigin(prefix: URL, root: URL) async throws -> Nginx {
        try await start(prefix: prefix, role: .origin(root: root))
    }

    enum Role {
        case cache(upstreams: [Int])
        case origin(root: URL)
    }

    /// The paths of the requests this nginx answered, in order (origins only).
    func requestedPaths() -> [String] {
        let log = (try? String(contentsOf: prefix.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init)
    }

    private static func start(prefix: URL, role: Role) async throws -> Nginx {
        // The free port can be taken by a server another test starts before nginx binds it:
        // nginx then exits, and a new port is tried.
        for _ in 0..<3 {
            let nginx = try Nginx(prefix: prefix, role: role)
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

    private init(prefix: URL, role: Role) throws {
        process = SpawnedProcess()
        self.prefix = prefix
        let executable = try #require(Self.executable)
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("cache"), withIntermediateDirectories: true)
        guard let port = LoopbackPort.free() else { throw NginxError.notListening }
        self.port = port
        let configuration = switch role {
        case .cache(let upstreams): Self.cacheConfiguration(prefix: prefix, port: port, upstreams: upstreams)
        case .origin(let root): Self.originConfiguration(prefix: prefix, port: port, root: root)
        }
        let file = prefix.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process.executableURL = executable
        process.arguments = ["-p", prefix.path, "-c", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// What every configuration starts with: one process, no daemon, every path in `prefix`.
    private static func preamble(prefix: URL) -> String {
        """
        master_process off;
        daemon off;
        worker_processes 1;
        pid \(prefix.path)/nginx.pid;
        error_log \(prefix.path)/error.log warn;
        events { worker_connections 64; }
        """
    }

    /// Every temporary folder in `prefix`: the compiled-in defaults may not be writable.
    private static func temporaryPaths(prefix: URL) -> String {
        ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
            .map { "    \($0)_temp_path \(prefix.path)/\($0);" }.joined(separator: "\n")
    }

    /// A static file server; the access log holds one request path per line, written as each
    /// response is sent.
    private static func originConfiguration(prefix: URL, port: Int, root: URL) -> String {
        preamble(prefix: prefix) + """

            http {
                log_format paths '$request_uri';
                access_log \(prefix.path)/access.log paths;
            \(temporaryPaths(prefix: prefix))
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.path);
                }
            }
            """
    }

    private static func cacheConfiguration(prefix: URL, port: Int, upstreams: [Int]) -> String {
        let servers = upstreams.map { "        server 127.0.0.1:\($0);" }.joined(separator: "\n")
        return preamble(prefix: prefix) + """

            http {
                access_log off;
            \(temporaryPaths(prefix: prefix))
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
