// The image proxy on Hummingbird (`webimage serve`) lands here with the image-proxy issue; the
// target exists now so the module graph of DESIGN.md builds from the start.
import WebImage
