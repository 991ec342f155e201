import Foundation
import MigrunKit
import MigrunModel
import Synchronization

/// Pictures of models, of a step between two versions, and of a store's planned path, as Graphviz
/// DOT (``svg(_:)`` runs Graphviz's `dot` for SVG).
///
/// ```swift
/// let dot = Diagram.model(model, title: "Moody 6")
/// let svg = try Diagram.svg(dot)
/// ```
///
/// A model is drawn as Xcode's graph draws it: an entity a box with its attributes (with types, `?`
/// for optional) and relationships, abstract entities in italics with «abstract», a parent named
/// after a colon and linked by a hollow arrow; each relationship and its inverse one edge, a
/// single arrowhead towards a to-one end, a double one towards a to-many end.
package enum Diagram {
  static let font = "Helvetica"

  /// The model as DOT.
  package static func model(_ model: ObjectModel, title: String) -> String {
    var graph = Graph(title: title)
    for entity in model.entities.sorted(by: { $0.name < $1.name }) {
      graph.nodes.append(node(entity, in: model, id: entity.name, marks: [:]))
    }
    graph.edges += edges(of: model, prefix: "")
    return graph.dot
  }

  /// What happens to each property in a step, for the side-by-side picture.
  enum Mark {
    case added, removed, renamed(from: String), transformed(String), kept

    var color: String? {
      switch self {
      case .added: "#1a7f37"
      case .removed: "#cf222e"
      case .renamed: "#9a6700"
      case .transformed: "#0550ae"
      case .kept: nil
      }
    }

    var note: String? {
      switch self {
      case .added: "added"
      case .removed: "removed"
      case .renamed(let from): "renamed from \(from)"
      case .transformed(let how): how
      case .kept: nil
      }
    }
  }

  /// Two versions side by side, what the step (its `mapping`) adds, removes, renames and transforms
  /// marked: removed entities and properties in the source version, the others in the destination,
  /// and each entity mapping an arrow from its source entity to its destination entity.
  package static func step(_ mapping: MappingModel, from: String, to: String, title: String) -> String {
    var graph = Graph(title: title)
    let (source, destination) = (mapping.source, mapping.destination)
    var sourceMarks: [String: [String: Mark]] = [:]
    var destinationMarks: [String: [String: Mark]] = [:]
    var entityMarks: (source: [String: Mark], destination: [String: Mark]) = ([:], [:])
    for entityMapping in mapping.entityMappings {
      switch entityMapping.kind {
      case .add:
        if let name = entityMapping.destinationEntity { entityMarks.destination[name] = .added }
        continue
      case .remove:
        if let name = entityMapping.sourceEntity { entityMarks.source[name] = .removed }
        continue
      default: break
      }
      guard let fromName = entityMapping.sourceEntity, let toName = entityMapping.destinationEntity,
        let fromEntity = source.entity(named: fromName), let toEntity = destination.entity(named: toName)
      else { continue }
      if fromName != toName { entityMarks.destination[toName] = .renamed(from: fromName) }
      let (marks, used) = propertyMarks(entityMapping, from: fromEntity, to: toEntity)
      destinationMarks[toName] = marks
      var removed: [String: Mark] = [:]
      for property in fromEntity.attributes.map(\.name) + fromEntity.relationships.map(\.name)
      where !used.contains(property) {
        removed[property] = .removed
      }
      sourceMarks[fromName] = removed
      graph.edges.append(
        Edge(
          from: "from:\(fromName)", to: "to:\(toName)",
          attributes: [
            "style": "dashed", "color": "#8c959f", "label": entityMapping.name, "fontcolor": "#57606a",
            "constraint": "true",
          ]))
    }
    let left = side(source, title: from, prefix: "from:", marks: sourceMarks, entities: entityMarks.source)
    let right = side(
      destination, title: to, prefix: "to:", marks: destinationMarks, entities: entityMarks.destination)
    graph.clusters = [("from", left), ("to", right)]
    graph.legend = true
    return graph.dot
  }

  /// Each destination property of `entityMapping` marked (kept, renamed, transformed, added), and
  /// the source properties it uses.
  private static func propertyMarks(_ entityMapping: EntityMapping, from fromEntity: Entity, to toEntity: Entity)
    -> (marks: [String: Mark], used: Set<String>)
  {
    var marks: [String: Mark] = [:]
    var used = Set<String>()
    for attribute in toEntity.attributes {
      switch entityMapping.attributes[attribute.name] {
      case .property(let old)?:
        used.insert(old)
        marks[attribute.name] = old == attribute.name ? .kept : .renamed(from: old)
      case .propertyOrDefault(let old, let fallback)?:
        used.insert(old)
        marks[attribute.name] = .transformed("NULL → \(fallback)")
      case .converted(let old, let conversion, _)?:
        used.insert(old)
        marks[attribute.name] = .transformed("\(conversion)")
      case .computed?:
        // A script computes it; a source attribute of the same name is its input, not removed.
        if fromEntity.attributes.contains(where: { $0.name == attribute.name }) { used.insert(attribute.name) }
        marks[attribute.name] = .transformed("computed")
      case .constant?, nil:
        marks[attribute.name] = fromEntity.attributes.contains { $0.name == attribute.name } ? .kept : .added
      }
    }
    for relationship in toEntity.relationships {
      if let old = entityMapping.relationships[relationship.name] {
        used.insert(old)
        marks[relationship.name] = old == relationship.name ? .kept : .renamed(from: old)
      } else {
        marks[relationship.name] = .added
      }
    }
    return (marks, used)
  }

  /// One version's side: its entities, marked, and its relationships, ids prefixed.
  private static func side(
    _ model: ObjectModel, title: String, prefix: String, marks: [String: [String: Mark]], entities: [String: Mark]
  ) -> Graph {
    var side = Graph(title: title)
    for entity in model.entities.sorted(by: { $0.name < $1.name }) {
      side.nodes.append(
        node(
          entity, in: model, id: prefix + entity.name, marks: marks[entity.name] ?? [:],
          entityMark: entities[entity.name]))
    }
    side.edges = edges(of: model, prefix: prefix)
    return side
  }

  /// A store's planned path: every version of the model in order, the store's and the destination
  /// marked, each planned step an arrow labelled with its kind.
  package static func plan(
    _ plan: MigrationPlan, versions: [String], store: String, title: String
  ) -> String {
    var graph = Graph(title: title)
    graph.direction = "LR"
    var names = versions
    if !names.contains(plan.sourceVersion) { names.insert(plan.sourceVersion, at: 0) }
    for name in names {
      var attributes = ["shape": "box", "style": "rounded", "label": name]
      if name == plan.sourceVersion {
        attributes["style"] = "rounded,filled"
        attributes["fillcolor"] = "#fff8c5"
        attributes["label"] = "\(name)\n(\(store))"
      }
      if name == plan.destinationVersion {
        attributes["style"] = "rounded,filled,bold"
        attributes["fillcolor"] = "#dafbe1"
      }
      graph.plain.append((name, attributes))
    }
    // The versions' order, drawn faint.
    for (earlier, later) in zip(names, names.dropFirst()) {
      graph.edges.append(Edge(from: earlier, to: later, attributes: ["style": "invis", "weight": "10"]))
    }
    for step in plan.steps {
      graph.edges.append(
        Edge(
          from: step.from, to: step.to,
          attributes: ["label": kind(of: step), "penwidth": "2", "color": "#0969da", "constraint": "false"]))
    }
    return graph.dot
  }

  /// How a step runs, as the plan says it.
  package static func kind(of step: MigrationStep) -> String {
    switch step.kind {
    case .inferred: return "inferred"
    case .scripted(let files) where files.count > 1:
      return "in \(files.count) passes: " + files.map(\.lastPathComponent).joined(separator: ", then ")
    case .scripted(let files):
      let file = files.first?.lastPathComponent ?? ""
      switch files.first?.pathExtension {
      case "lua": return "Lua: \(file)"
      case "xcmappingmodel", "cdm": return "Apple mapping model: \(file)"
      default: return "scripted: \(file)"
      }
    }
  }

  /// The most `dot` may take to draw one picture: its time, and the size of its SVG.
  package static let dotBudget = (seconds: 60, bytes: 32 << 20)

  /// The SVG Graphviz's `dot` draws for `dot` (Debian: the `graphviz` package), within
  /// ``dotBudget``: past it `dot` is killed and the picture is refused by name. `dot` runs under
  /// `setpriv --pdeathsig KILL` where there is one, so that it dies with migrun, killed or not.
  package static func svg(_ dot: String) throws -> Data {
    let process = try dotProcess()
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let budget = Mutex((timedOut: false, done: false))
    let identifier = process.processIdentifier
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(dotBudget.seconds)) {
      budget.withLock { state in
        guard !state.done else { return }
        state.timedOut = true
        kill(identifier, SIGKILL)
      }
    }
    // Feed and drain at once: a large picture must not block on a full pipe.
    let writer = Thread {
      input.fileHandleForWriting.write(Data(dot.utf8))
      try? input.fileHandleForWriting.close()
    }
    writer.start()
    // dot's messages: the first 64 KiB kept, the rest drained so that dot never blocks on them.
    let message = Mutex(Data())
    let drained = DispatchSemaphore(value: 0)
    let drain = Thread {
      let read = (try? errors.fileHandleForReading.read(upToCount: 1 << 16)) ?? Data()
      message.withLock { $0 = read }
      while let more = try? errors.fileHandleForReading.read(upToCount: 1 << 16), !more.isEmpty {}
      drained.signal()
    }
    drain.start()
    let svg = readSVG(output, of: identifier)
    process.waitUntilExit()
    drained.wait()
    let timedOut = budget.withLock { state in
      state.done = true
      return state.timedOut
    }
    try checkBudget(timedOut: timedOut, size: svg.count)
    guard process.terminationStatus == 0 else {
      let said = message.withLock { String(decoding: $0, as: UTF8.self) }
      throw DiagramError("dot failed: \(said.isEmpty ? "exit \(process.terminationStatus)" : said)")
    }
    return svg
  }

  /// Refuses a picture `dot` was stopped for: it ran out of time, or its SVG passed the size.
  static func checkBudget(timedOut: Bool, size: Int) throws {
    if timedOut {
      throw DiagramError(
        "dot did not finish the picture in \(dotBudget.seconds) s and was stopped; --format dot writes the DOT")
    }
    if size > dotBudget.bytes {
      throw DiagramError(
        "dot's picture passed \(dotBudget.bytes >> 20) MiB and was stopped; --format dot writes the DOT")
    }
  }

  /// `dot -Tsvg`, under `setpriv --pdeathsig KILL` where there is one.
  static func dotProcess() throws -> Process {
    let candidates = ["/usr/bin/dot", "/usr/local/bin/dot", "/opt/homebrew/bin/dot"]
    guard let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
      throw DiagramError(
        "Graphviz's dot is not installed (Debian: apt-get install graphviz); --format dot writes the DOT")
    }
    let process = Process()
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
      process.arguments = ["--pdeathsig", "KILL", "--", tool, "-Tsvg"]
    } else {
      process.executableURL = URL(fileURLWithPath: tool)
      process.arguments = ["-Tsvg"]
    }
    return process
  }

  /// What `dot` (process `identifier`) writes to `output`, until it ends or passes
  /// ``dotBudget``'s size (then it is killed).
  static func readSVG(_ output: Pipe, of identifier: Int32) -> Data {
    var svg = Data()
    while let chunk = try? output.fileHandleForReading.read(upToCount: 1 << 16), !chunk.isEmpty {
      svg.append(chunk)
      if svg.count > dotBudget.bytes {
        kill(identifier, SIGKILL)
        break
      }
    }
    return svg
  }

  package struct DiagramError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
  }

  // MARK: - Drawing

  struct Edge {
    var from: String
    var to: String
    var attributes: [String: String]
  }

  struct Graph {
    var title: String
    var direction = "LR"
    var nodes: [(id: String, label: String)] = []
    /// Nodes drawn with their own attributes (not entity tables).
    var plain: [(id: String, attributes: [String: String])] = []
    var edges: [Edge] = []
    var clusters: [(name: String, graph: Graph)] = []
    var legend = false

    init(title: String) { self.title = title }

    var dot: String {
      var lines = [
        "digraph \(quoted(title)) {",
        "  graph [rankdir=\(direction), fontname=\"\(font)\", label=\(quoted(title)), labelloc=t, fontsize=16, nodesep=0.4, ranksep=0.8];",
        "  node [shape=plaintext, fontname=\"\(font)\", fontsize=11];",
        "  edge [fontname=\"\(font)\", fontsize=10];",
      ]
      lines += body(indent: "  ")
      for (name, cluster) in clusters {
        lines.append("  subgraph \(quoted("cluster_\(name)")) {")
        lines.append("    label=\(quoted(cluster.title)); style=rounded; color=\"#d0d7de\";")
        lines += cluster.body(indent: "    ")
        lines.append("  }")
      }
      for edge in clusters.isEmpty ? [] : edges { lines.append("  " + Self.line(edge)) }
      if legend {
        lines.append(
          "  legend [label=<<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\"><TR><TD><FONT COLOR=\"#1a7f37\">added</FONT></TD><TD><FONT COLOR=\"#cf222e\">removed</FONT></TD><TD><FONT COLOR=\"#9a6700\">renamed</FONT></TD><TD><FONT COLOR=\"#0550ae\">transformed</FONT></TD></TR></TABLE>>];"
        )
      }
      lines.append("}")
      return lines.joined(separator: "\n") + "\n"
    }

    func body(indent: String) -> [String] {
      var lines: [String] = []
      for (id, label) in nodes { lines.append("\(indent)\(quoted(id)) [label=<\(label)>];") }
      for (id, attributes) in plain {
        let list = attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: ", ")
        lines.append("\(indent)\(quoted(id)) [\(list)];")
      }
      // A graph of clusters draws its own edges (between the clusters) after them.
      if clusters.isEmpty { for edge in edges { lines.append(indent + Self.line(edge)) } }
      return lines
    }

    static func line(_ edge: Edge) -> String {
      let list = edge.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\(quoted($0.value))" }.joined(
        separator: ", ")
      return "\(quoted(edge.from)) -> \(quoted(edge.to)) [\(list)];"
    }
  }

  /// An entity as an HTML-like table: name (italic when abstract, «abstract», `: Parent`), then its
  /// attributes and relationships, each coloured by its mark.
  static func node(
    _ entity: Entity, in model: ObjectModel, id: String, marks: [String: Mark], entityMark: Mark? = nil
  ) -> (id: String, label: String) {
    var header = "<B>\(html(entity.name))</B>"
    if entity.isAbstract { header = "<I>\(header)</I> «abstract»" }
    if let parent = entity.parentName { header += " : \(html(parent))" }
    let headerColor = entityMark?.color ?? "#ddf4ff"
    var rows = [
      "<TR><TD BGCOLOR=\"\(entityMark == nil ? headerColor : "#ffffff")\"><FONT COLOR=\"\(entityMark?.color ?? "#000000")\">\(header)</FONT>\(entityMark?.note.map { "<BR/><FONT POINT-SIZE=\"9\">\(html($0))</FONT>" } ?? "")</TD></TR>"
    ]
    func row(_ name: String, _ text: String) {
      let mark = marks[name]
      var cell = html(text)
      if let note = mark?.note { cell += " <FONT POINT-SIZE=\"9\">(\(html(note)))</FONT>" }
      if let color = mark?.color { cell = "<FONT COLOR=\"\(color)\">\(cell)</FONT>" }
      rows.append("<TR><TD ALIGN=\"LEFT\" PORT=\"\(port(name))\">\(cell)</TD></TR>")
    }
    for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) {
      var text = "\(attribute.name): \(attribute.type.xmlName)\(attribute.isOptional ? "?" : "")"
      if attribute.isTransient { text += " (transient)" }
      if let derivation = attribute.derivation { text += " = \(derivation.expression)" }
      row(attribute.name, text)
    }
    for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) {
      let target = relationship.isToMany ? "[\(relationship.destinationEntity)]" : relationship.destinationEntity
      row(relationship.name, "\(relationship.name) → \(target)\(relationship.isOptional ? "?" : "")")
    }
    for (name, mark) in marks.sorted(by: { $0.key < $1.key })
    where !entity.attributes.contains(where: { $0.name == name })
      && !entity.relationships.contains(where: { $0.name == name })
    {
      if case .removed = mark { row(name, name) }
    }
    let table =
      "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"4\">\(rows.joined())</TABLE>"
    return (id, table)
  }

  /// One edge per relationship pair (a relationship and its inverse), and a hollow arrow from each
  /// subentity to its parent.
  static func edges(of model: ObjectModel, prefix: String) -> [Edge] {
    var edges: [Edge] = []
    var drawn = Set<String>()
    for entity in model.entities.sorted(by: { $0.name < $1.name }) {
      if let parent = entity.parentName {
        edges.append(
          Edge(
            from: prefix + entity.name, to: prefix + parent,
            attributes: ["arrowhead": "empty", "style": "dashed", "color": "#57606a"]))
      }
      for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) {
        let key = "\(entity.name).\(relationship.name)"
        guard !drawn.contains(key) else { continue }
        drawn.insert(key)
        let inverse = model.inverse(of: relationship)
        if inverse != nil, let inverseName = relationship.inverseName {
          drawn.insert("\(relationship.destinationEntity).\(inverseName)")
        }
        var attributes = [
          "arrowhead": relationship.isToMany ? "normalnormal" : "normal",
          "headlabel": relationship.name, "labeldistance": "2", "labelangle": "25",
        ]
        if let inverse {
          attributes["dir"] = "both"
          attributes["arrowtail"] = inverse.isToMany ? "normalnormal" : "normal"
          attributes["taillabel"] = inverse.name
        }
        edges.append(
          Edge(
            from: "\(prefix)\(entity.name)", to: "\(prefix)\(relationship.destinationEntity)", attributes: attributes))
      }
    }
    return edges
  }

  static func port(_ name: String) -> String {
    "p_" + String(name.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? Character($0) : "_" })
  }

  static func html(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
  }

  static func quoted(_ text: String) -> String {
    "\""
      + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      .replacingOccurrences(of: "\n", with: "\\n") + "\""
  }
}
