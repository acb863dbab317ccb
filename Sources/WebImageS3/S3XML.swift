import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A small element tree of an S3 XML answer, built with Foundation's `XMLParser`: S3's answers
/// are a few kilobytes of plain elements (no attributes that matter, no mixed content), so a
/// tree is the simplest thing to read `<Error>` and `<ListBucketResult>` from.
struct S3XMLElement: Sendable {
    var name: String
    var text: String = ""
    var children: [S3XMLElement] = []

    /// The first child named `name`.
    subscript(_ name: String) -> S3XMLElement? { children.first { $0.name == name } }

    /// The trimmed text of the first child named `name`.
    func value(_ name: String) -> String? { self[name]?.text }

    func all(_ name: String) -> [S3XMLElement] { children.filter { $0.name == name } }

    /// The document's root element, or `nil` when `data` is not well-formed XML.
    static func parse(_ data: Data) -> S3XMLElement? {
        let builder = TreeBuilder()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = builder
        guard parser.parse() else { return nil }
        return builder.root
    }

    /// Used only inside ``parse(_:)``, on one thread, for one document.
    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var stack: [S3XMLElement] = []
        var root: S3XMLElement?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            stack.append(S3XMLElement(name: elementName))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            guard var element = stack.popLast() else { return }
            element.text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }
    }
}

extension S3Error {
    /// The error an S3 error body (`<Error><Code>…<Message>…<RequestId>…</Error>`) describes,
    /// falling back on the status when the body is empty (a `HEAD`) or not S3's XML.
    static func from(status: Int, body: Data, requestID: String?, isObjectRequest: Bool) -> S3Error {
        let root = body.isEmpty ? nil : S3XMLElement.parse(body)
        let error = root?.name == "Error" ? root : nil
        let code = error?.value("Code").flatMap { $0.isEmpty ? nil : $0 }
        let message = error?.value("Message") ?? (body.isEmpty ? "" : String(decoding: body.prefix(200), as: UTF8.self))
        return S3Error(
            kind(code: code, status: status, isObjectRequest: isObjectRequest), statusCode: status,
            message: message, code: code, requestID: error?.value("RequestId") ?? requestID)
    }
}

extension S3ObjectList {
    /// The page a `<ListBucketResult>` describes.
    static func parse(_ data: Data) throws(S3Error) -> S3ObjectList {
        guard let root = S3XMLElement.parse(data), root.name == "ListBucketResult" else {
            throw S3Error(.invalidResponse, message: "the listing is not a ListBucketResult document")
        }
        let objects = root.all("Contents").map { entry in
            Entry(key: entry.value("Key") ?? "", size: entry.value("Size").flatMap { Int($0) } ?? 0,
                  etag: entry.value("ETag"), lastModified: entry.value("LastModified"))
        }
        return S3ObjectList(
            objects: objects,
            commonPrefixes: root.all("CommonPrefixes").compactMap { $0.value("Prefix") },
            isTruncated: root.value("IsTruncated")?.lowercased() == "true",
            nextContinuationToken: root.value("NextContinuationToken").flatMap { $0.isEmpty ? nil : $0 },
            keyCount: root.value("KeyCount").flatMap { Int($0) })
    }
}
