import Foundation
import Synchronization

/// The `Date` header's value (RFC 9110's IMF-fixdate, `Tue, 24 Nov 2026 08:49:37 GMT`), made
/// at most once a second and shared by every connection.
///
/// ```swift
/// head.headerFields[.date] = HTTPDate.now
/// ```
enum HTTPDate {
    private static let cached = Mutex<(second: Int, text: String)>((-1, ""))

    static var now: String {
        let second = time(nil)
        return cached.withLock { cached in
            if cached.second != second { cached = (second, format(second)) }
            return cached.text
        }
    }

    static func format(_ seconds: Int) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
