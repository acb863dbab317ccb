import Synchronization

/// Who a connection or a request comes from, for the per-client limits: an IPv4 address, or the
/// /64 an IPv6 address belongs to (a host is given a whole /64, so counting single IPv6 addresses
/// would let one host open as many connections as it has addresses). IPv4-mapped IPv6 addresses
/// (a listener on `[::]`) count as their IPv4 address.
struct ClientAddress: Hashable, Sendable {
    private let address: IPAddress

    init?(_ text: String) {
        guard let parsed = IPAddress(text) else { return nil }
        self.init(parsed)
    }

    init(_ parsed: IPAddress) {
        switch parsed {
        case .v4:
            address = parsed
        case .v6(let bytes) where bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF:
            address = .v4(bytes[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case .v6(let bytes):
            address = .v6(Array(bytes.prefix(8)) + Array(repeating: 0, count: 8))
        }
    }

}

/// What each client holds (connections, or requests in progress), against a cap per client.
final class PerClientLimiter: Sendable {
    let limit: Int
    private let held = Mutex<[ClientAddress: Int]>([:])

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes one of `client`'s slots if it has one free.
    func tryAcquire(_ client: ClientAddress) -> Bool {
        held.withLock { held in
            let count = held[client, default: 0]
            guard count < limit else { return false }
            held[client] = count + 1
            return true
        }
    }

    func release(_ client: ClientAddress) {
        held.withLock { held in
            guard let count = held[client] else { return }
            held[client] = count > 1 ? count - 1 : nil
        }
    }

    /// Clients holding at least one slot now (the table never keeps a client with none).
    var clients: Int { held.withLock { $0.count } }
}
