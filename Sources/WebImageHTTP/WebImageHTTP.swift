// The HTTP loader on AsyncHTTPClient (`HTTPImageLoader`) lands here with the loading-pipeline
// issue; the target exists now so the module graph of DESIGN.md builds from the start.
import WebImageCore
