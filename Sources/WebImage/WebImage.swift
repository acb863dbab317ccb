// One import for users of the library: `import WebImage` brings the core types, the codecs and
// the loaders.
@_exported import WebImageCodecs
@_exported import WebImageCore
@_exported import WebImageHTTP
