/// A plain-text table whose columns are padded to their widest cell, for terminal output.
///
/// ```swift
/// var table = TextTable(columns: [.init("NAME"), .init("BYTES", alignment: .right)])
/// table.append(["a.jpg", "1024"])
/// print(table.rendered, terminator: "")
/// ```
struct TextTable {
    struct Column {
        enum Alignment { case left, right }

        var title: String
        var alignment: Alignment

        init(_ title: String, alignment: Alignment = .left) {
            self.title = title
            self.alignment = alignment
        }
    }

    var columns: [Column]
    private(set) var rows: [[String]] = []

    init(columns: [Column]) {
        self.columns = columns
    }

    /// Adds a row; it must have one cell per column.
    mutating func append(_ row: [String]) {
        precondition(row.count == columns.count, "a row needs one cell per column")
        rows.append(row)
    }

    /// The header line and the rows, columns two spaces apart, each line ending in a newline.
    /// Widths count characters, so `×` and accented file names line up.
    var rendered: String {
        let lines = [columns.map(\.title)] + rows
        let widths = columns.indices.map { index in lines.map { $0[index].count }.max() ?? 0 }
        var output = ""
        for line in lines {
            var cells: [String] = []
            for (index, cell) in line.enumerated() {
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                let isLast = index == line.count - 1
                switch columns[index].alignment {
                case .left: cells.append(isLast ? cell : cell + padding)
                case .right: cells.append(padding + cell)
                }
            }
            output += cells.joined(separator: "  ") + "\n"
        }
        return output
    }
}
