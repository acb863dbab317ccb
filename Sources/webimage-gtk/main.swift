import CGTK
import Foundation
import Synchronization
import WebImage
import WebImageGTK

// webimage-gtk: the desktop gallery (usage in GalleryOptions.swift, README's GTK section).
// GLib's main loop runs on the main thread; Swift's main actor runs on it (GTKMainLoop).

let options: GalleryOptions
switch GalleryOptions.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed): options = parsed
case .failure(let error):
    if let message = error.message { printError("webimage-gtk: \(message)") }
    printError(GalleryOptions.usage)
    exit(error.message == nil ? 0 : 2)
}
// glibc otherwise keeps most freed decode buffers (see README, "Memory").
_ = ProcessMemory.returnLargeBlocksToSystem()

let items: [GalleryItem]
switch waitFor({ try await GallerySource.items(for: options.source, cellSize: options.cellSize) }) {
case .success(let found): items = found
case .failure(let error):
    printError("webimage-gtk: \(error)")
    exit(1)
}
if options.listsOnly {
    for item in items {
        // A fourth column when the source gave the image's ThumbHash (a proxy's page does).
        let hash = if case .thumbHash(let hash)? = item.placeholder { "\t" + hash } else { "" }
        print("\(item.name)\t\(item.thumbnail.absoluteString)\t\(item.full.absoluteString)\(hash)")
    }
    exit(0)
}

guard gtk_init_check() != 0 else {
    let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
    printError("""
        webimage-gtk: no display to open a window on (\(display.isEmpty ? "DISPLAY is not set" : "cannot open DISPLAY=\(display)")).
        Run it in a desktop session, or under Xvfb with a screenshot of the window instead:
          GSK_RENDERER=cairo xvfb-run -a webimage-gtk \(options.source) --screenshot gallery.png
        """)
    exit(1)
}
GTKMainLoop.install()
let loop = g_main_loop_new(nil, 0)
Task { @MainActor in
    let gallery = GalleryWindow(items: items, options: options, observer: options.automation ? GalleryAutomation.observer : nil) {
        g_main_loop_quit(loop)
    }
    let automation = options.automation ? GalleryAutomation(gallery: gallery) : nil
    gallery.present()
    // Frames come once the window is mapped (at once under Xvfb, which has no window manager).
    while gtk_widget_get_mapped(gallery.content) == 0 { await Task.yield() }
    if let automation {
        await automation.run(standardInputLines())
        g_main_loop_quit(loop)
    } else if let path = options.screenshot {
        do {
            try await GalleryScreenshot.take(of: gallery, to: path)
            print("webimage-gtk: wrote \(path)")
        } catch {
            printError("webimage-gtk: no screenshot: \(error)")
            exitStatus.withLock { $0 = 1 }
        }
        g_main_loop_quit(loop)
    }
}
g_main_loop_run(loop)
exit(exitStatus.withLock { $0 })
