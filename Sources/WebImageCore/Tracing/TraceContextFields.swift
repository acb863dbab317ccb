import Tracing

/// The header fields that carry the current trace to another service (W3C Trace Context's
/// `traceparent` and `tracestate`, as the bootstrapped instrument writes them): every loader
/// adds them to its requests, so an origin, S3 or a result store sees the trace of the load
/// that asked.
///
/// Empty when no span is current or no instrument is bootstrapped: a request then carries no
/// trace fields at all.
package enum TraceContextFields {
    /// The fields for the span current in this task, as (name, value) pairs.
    package static func current() -> [(name: String, value: String)] {
        guard let context = ServiceContext.current else { return [] }
        var fields: [(name: String, value: String)] = []
        InstrumentationSystem.instrument.inject(context, into: &fields, using: FieldListInjector())
        return fields
    }

    private struct FieldListInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [(name: String, value: String)]) {
            carrier.append((name: key, value: value))
        }
    }
}
