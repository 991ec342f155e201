import Foundation
import MigrunKit
import PropertyList

/// A ``Review`` as one self-contained HTML page: inline CSS (for a laptop, a phone and print), the
/// steps' diagrams as inline SVG, no script and no outside address — its content security policy
/// lets nothing load or run. Every text from the user's files (names, paths, messages) is escaped.
package enum ReviewPage {
  package static func html(_ review: Review, version: String = BuildInfo.versionLine) -> String {
    var page = Page()
    let title = "Migration review: \(review.store)"
    page.raw(
      """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
      <title>\(escaped(title))</title>
      <style>\(css)</style>
      </head>
      <body>
      <header>
      <h1>Migration review: <code>\(escaped(URL(fileURLWithPath: review.store).lastPathComponent))</code></h1>
      """)
    summary(review, into: &page)
    page.raw("</header>")
    contents(review, into: &page)
    page.raw("<main>")
    path(review, into: &page)
    for index in review.steps.indices { step(review, index, into: &page) }
    checks(review, into: &page)
    verify(review, into: &page)
    lint(review, into: &page)
    page.raw("</main>")
    page.raw("<footer>Written by migrun \(escaped(version)).</footer>\n</body>\n</html>\n")
    return page.text
  }

  // MARK: - Sections

  private static func summary(_ review: Review, into page: inout Page) {
    let total = review.objectsBefore.values.reduce(0, +)
    let after = review.steps.last?.run?.objectsAfter.values.reduce(0, +)
    let result: String
    if let refused = review.refused {
      result = "<strong class=\"bad\">refused</strong>: \(escaped(refused))"
    } else if review.steps.isEmpty {
      result = "nothing to do: the store is at the destination version"
    } else {
      result = "<strong class=\"good\">migrated</strong> on a copy; the store itself was not written"
    }
    page.raw("<dl class=\"summary\">")
    page.term(
      "Store",
      "<code>\(escaped(review.store))</code>"
        + (review.madeUp ? " (a folder: a store of \(escaped(review.source)) made up of generated objects)" : ""))
    page.term("Model", "<code>\(escaped(review.model))</code>")
    page.term(
      "Path", "\(escaped(review.source)) → \(escaped(review.destination)), \(plural(review.steps.count, "step"))")
    page.term("Objects", "\(total) before" + (after.map { ", \($0) after" } ?? ""))
    page.term("Result", result)
    page.raw("</dl>")
  }

  private static func contents(_ review: Review, into page: inout Page) {
    page.raw("<nav aria-label=\"Contents\"><ol>")
    page.raw("<li><a href=\"#path\">The path and why</a></li>")
    for (index, step) in review.steps.enumerated() {
      page.raw("<li><a href=\"#step-\(index + 1)\">Step \(index + 1): \(escaped(step.name))</a></li>")
    }
    page.raw("<li><a href=\"#check\">Check before and after</a></li>")
    page.raw("<li><a href=\"#verify\">Made-up stores of every old version</a></li>")
    page.raw("<li><a href=\"#lint\">Other lint findings</a></li>")
    page.raw("</ol></nav>")
  }

  private static func path(_ review: Review, into page: inout Page) {
    page.raw("<section id=\"path\"><h2>The path and why</h2>")
    page.raw("<p>Rule <code>\(escaped(review.rule))</code>: \(escaped(review.why)).</p>")
    if !review.steps.isEmpty {
      page.table(
        ["Step", "Kind", "Method", "Why not DDL"],
        review.steps.enumerated().map { index, step in
          [
            "<a href=\"#step-\(index + 1)\">\(escaped(step.name))</a>",
            escaped(step.kind) + (step.script.map { " <code>\(escaped($0))</code>" } ?? ""),
            escaped(method(step.method)), step.notDDLBecause.map(escaped) ?? "—",
          ]
        })
    }
    if !review.passedOver.isEmpty {
      page.raw("<h3>Passed over</h3><ul>")
      for file in review.passedOver {
        page.raw("<li><code>\(escaped(file.file))</code>: \(escaped(file.reason))</li>")
      }
      page.raw("</ul>")
    }
    page.raw("</section>")
  }

  private static func step(_ review: Review, _ index: Int, into page: inout Page) {
    let step = review.steps[index]
    page.raw("<section id=\"step-\(index + 1)\" class=\"step\"><h2>Step \(index + 1): \(escaped(step.name))</h2>")
    page.raw(
      "<p>\(escaped(step.kind))\(step.script.map { ", <code>\(escaped($0))</code>" } ?? ""); \(escaped(method(step.method)))"
        + (step.notDDLBecause.map { " — not DDL: \(escaped($0))" } ?? "") + ".</p>")
    modelChanges(step, into: &page)
    page.raw("<h3>Entity mappings</h3>")
    page.table(
      [
        "Mapping", "Kind", "From", "To", step.mappings.contains(where: \.estimated) ? "Objects (estimated)" : "Objects",
      ],
      step.mappings.map { mapping in
        [
          escaped(mapping.name), escaped(mapping.kind), mapping.source.map(escaped) ?? "—",
          mapping.destination.map(escaped) ?? "—", mapping.objects.map(String.init) ?? "—",
        ]
      })
    drops(step, into: &page)
    files(step, into: &page)
    if !step.lint.isEmpty {
      page.raw("<h3>Lint findings of this change</h3><ul class=\"findings\">")
      for finding in step.lint { page.raw("<li>\(findingText(finding))</li>") }
      page.raw("</ul>")
    }
    run(review, index, into: &page)
    page.raw("<h3>Diagram</h3>")
    if let svg = index < review.diagrams.count ? review.diagrams[index] : nil {
      page.raw("<figure class=\"diagram\">\(svg)</figure>")
    } else {
      page.raw("<p>No diagram: Graphviz's <code>dot</code> is not installed (Debian: graphviz).</p>")
    }
    page.raw("</section>")
  }

  /// The step's entity and property changes, and its entities' version hashes (those changed in bold).
  private static func modelChanges(_ step: Review.Step, into page: inout Page) {
    page.raw("<h3>Model changes</h3>")
    if step.changes.isEmpty {
      page.raw("<p>No entity or property changes (the version hashes below say what else differs).</p>")
    } else {
      page.table(
        ["Change", "Entity", "Property", "Detail"],
        step.changes.map { change in
          [
            "<span class=\"\(escaped(change.change))\">\(escaped(change.change)) \(escaped(change.kind))</span>",
            escaped(change.entity), change.property.map(escaped) ?? "", change.detail.map(escaped) ?? "",
          ]
        })
    }
    let changedHashes = step.hashes.filter(\.changed)
    page.raw("<details><summary>Version hashes (\(changedHashes.count) of \(step.hashes.count) changed)</summary>")
    page.table(
      ["Entity", escaped(step.from), escaped(step.to)],
      step.hashes.map { hash in
        [
          (hash.changed ? "<strong>\(escaped(hash.entity))</strong>" : escaped(hash.entity)),
          "<code>\(hash.from.map(escaped) ?? "—")</code>", "<code>\(hash.to.map(escaped) ?? "—")</code>",
        ]
      })
    page.raw("</details>")
  }

  private static func drops(_ step: Review.Step, into page: inout Page) {
    page.raw("<h3>Drops and refusals</h3>")
    let dropped = step.run?.dropped ?? step.drops
    if dropped.isEmpty {
      page.raw("<p>The step leaves no value behind.</p>")
    } else {
      page.raw("<ul>")
      for drop in dropped { page.raw("<li class=\"removed\">drops \(escaped(drop.text))</li>") }
      page.raw("</ul>")
    }
  }

  private static func files(_ step: Review.Step, into page: inout Page) {
    guard step.script != nil || step.stage != nil || !step.policies.isEmpty || !step.placeholders.isEmpty else {
      return
    }
    page.raw("<h3>What the step files do</h3><ul>")
    for policy in step.policies {
      var parts: [String] = []
      if !policy.hooks.isEmpty {
        parts.append("hooks " + policy.hooks.map { "<code>\(escaped($0))</code>" }.joined(separator: ", "))
      }
      if !policy.computed.isEmpty {
        parts.append("computes " + policy.computed.map { "<code>\(escaped($0))</code>" }.joined(separator: ", "))
      }
      if policy.filters { parts.append("filters the source objects") }
      page.raw(
        "<li><code>\(escaped(policy.mapping))</code> (<code>\(escaped(policy.file))</code>): "
          + (parts.isEmpty ? "the default copy" : parts.joined(separator: "; ")) + "</li>")
    }
    for placeholder in step.placeholders {
      page.raw("<li>left to write (<code>migrun port</code>): <code>\(escaped(placeholder))</code></li>")
    }
    if let stage = step.stage {
      page.raw(
        "<li>custom stage <code>\(escaped(stage.file))</code>: "
          + stage.hooks.map { "<code>\(escaped($0))</code>" }.joined(separator: ", ") + "</li>")
    }
    page.raw("</ul>")
    if step.coverage.isEmpty {
      page.raw(
        "<p class=\"muted\">Test coverage: not given (<code>migrun test --coverage FILE</code>, then <code>--coverage FILE</code>).</p>"
      )
    } else {
      page.table(
        ["File", "Lines run"],
        step.coverage.map { ["<code>\(escaped($0.file))</code>", "\($0.linesRun) of \($0.lines) (\($0.percent)%)"] })
    }
  }

  private static func run(_ review: Review, _ index: Int, into page: inout Page) {
    page.raw("<h3>On the copy</h3>")
    guard let run = review.steps[index].run else {
      page.raw("<p class=\"bad\">Not run: \(escaped(review.refused ?? "the run stopped before this step")).</p>")
      return
    }
    let before = index == 0 ? review.objectsBefore : review.steps[index - 1].run?.objectsAfter ?? [:]
    page.raw(
      "<p>\(run.seconds.map { String(format: "%.2f s", $0) } ?? "time not measured")"
        + (run.merged > 0 ? "; \(plural(run.merged, "object")) merged by the merge rules" : "") + ".</p>")
    let entities = Set(before.keys).union(run.objectsAfter.keys).sorted()
    page.table(
      ["Entity", "Before", "After"],
      entities.map { entity in
        [escaped(entity), before[entity].map(String.init) ?? "—", run.objectsAfter[entity].map(String.init) ?? "—"]
      }, caption: "Objects per entity")
    page.table(
      ["Mapping", "Read", "Written", "Note"],
      run.mappings.map { count in
        [escaped(count.mapping), "\(count.read)", "\(count.written)", count.note.map(escaped) ?? ""]
      }, caption: "Conservation: every count checked, or the step is refused")
  }

  private static func checks(_ review: Review, into page: inout Page) {
    page.raw("<section id=\"check\"><h2>Check before and after</h2>")
    let checks: [(label: String, findings: [Review.Finding]?)] = [
      ("Before", review.checkBefore), ("After", review.checkAfter),
    ]
    for (label, findings) in checks {
      guard let findings else {
        page.raw(
          "<p>\(label): not checked (\(review.steps.isEmpty ? "nothing to run" : "the run did not finish")).</p>")
        continue
      }
      let damage = findings.filter { !$0.note }
      page.raw(
        "<p>\(label): "
          + (damage.isEmpty
            ? "<span class=\"good\">clean</span>" : "<span class=\"bad\">\(plural(damage.count, "finding"))</span>")
          + "</p>")
      if !findings.isEmpty {
        page.raw("<ul class=\"findings\">")
        for finding in findings { page.raw("<li>\(findingText(finding))</li>") }
        page.raw("</ul>")
      }
    }
    page.raw("</section>")
  }

  private static func verify(_ review: Review, into page: inout Page) {
    page.raw("<section id=\"verify\"><h2>Made-up stores of every old version</h2>")
    if review.verify.isEmpty {
      page.raw("<p>The destination is the model's first version: no older version to verify.</p>")
    } else {
      page.table(
        ["Version", "Objects", "Result", "Path or failure"],
        review.verify.map { store in
          [
            escaped(store.version), "\(store.objects)",
            store.passed ? "<span class=\"good\">passed</span>" : "<span class=\"bad\">failed</span>",
            escaped(store.detail),
          ]
        })
    }
    page.raw("</section>")
  }

  private static func lint(_ review: Review, into page: inout Page) {
    page.raw("<section id=\"lint\"><h2>Other lint findings</h2>")
    if review.lint.isEmpty {
      page.raw("<p>None outside the steps above.</p>")
    } else {
      page.raw("<ul class=\"findings\">")
      for finding in review.lint { page.raw("<li>\(findingText(finding))</li>") }
      page.raw("</ul>")
    }
    if !review.coverage.isEmpty {
      page.table(
        ["File", "Lines run"],
        review.coverage.map { ["<code>\(escaped($0.file))</code>", "\($0.linesRun) of \($0.lines) (\($0.percent)%)"] },
        caption: "Coverage of every tested policy file")
    }
    page.raw("</section>")
  }

  // MARK: - Pieces

  private static func findingText(_ finding: Review.Finding) -> String {
    let versions = finding.versions.isEmpty ? "" : " (\(escaped(finding.versions.joined(separator: " → "))))"
    return "<code>\(escaped(finding.rule))</code>\(versions): \(escaped(finding.message))"
  }

  /// The step's method in `plan`'s words.
  private static func method(_ raw: String) -> String {
    switch StepMethod(rawValue: raw) {
    case .ddl: "runs as DDL on a copy of the store: no row copied"
    case .copyRows: "copies rows by SQL"
    case .objects: "runs object by object"
    case .mixed: "copies the rows it can by SQL, then the rest object by object"
    case nil: raw
    }
  }

  /// Text from anywhere (the user's files included) made safe in HTML text and attribute values.
  static func escaped(_ text: String) -> String {
    XMLText.escaped(text, controls: .spaces).replacingOccurrences(of: "'", with: "&#39;")
  }

  private struct Page {
    var text = ""

    mutating func raw(_ html: String) { text += html + "\n" }

    mutating func term(_ name: String, _ html: String) { raw("<dt>\(name)</dt><dd>\(html)</dd>") }

    /// A table in a box that scrolls sideways on a narrow screen; cells are HTML already escaped.
    mutating func table(_ head: [String], _ rows: [[String]], caption: String? = nil) {
      raw("<div class=\"table\"><table>")
      if let caption { raw("<caption>\(caption)</caption>") }
      raw("<thead><tr>" + head.map { "<th scope=\"col\">\($0)</th>" }.joined() + "</tr></thead><tbody>")
      for row in rows { raw("<tr>" + row.map { "<td>\($0)</td>" }.joined() + "</tr>") }
      raw("</tbody></table></div>")
    }
  }

  private static let css = """
    :root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
      --good: #1a7f37; --bad: #cf222e; --renamed: #9a6700; --changed: #0550ae; }
    * { box-sizing: border-box; }
    body { margin: 0 auto; max-width: 72rem; padding: 1rem 1.25rem 3rem; color: var(--ink);
      font: 16px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
    h1 { font-size: 1.6rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
    h2 { font-size: 1.3rem; margin-top: 2.5rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
    h3 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
    code { font: .88em/1.4 ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
    dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0;
      padding: .8rem 1rem; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; }
    dl.summary dt { font-weight: 600; }
    dl.summary dd { margin: 0; overflow-wrap: anywhere; }
    nav ol { columns: 2 18rem; padding-left: 1.5rem; }
    a { color: #0969da; }
    .table { overflow-x: auto; margin: .5rem 0 1rem; }
    table { border-collapse: collapse; font-size: .92rem; min-width: 50%; }
    caption { text-align: left; font-weight: 600; padding: .3rem 0; }
    th, td { border: 1px solid var(--line); padding: .3rem .6rem; text-align: left; vertical-align: top; }
    th { background: var(--soft); }
    .good { color: var(--good); } .bad { color: var(--bad); } .muted { color: var(--muted); }
    .added { color: var(--good); } .removed { color: var(--bad); }
    .renamed { color: var(--renamed); } .changed { color: var(--changed); }
    ul.findings li { margin: .2rem 0; }
    details { margin: .5rem 0; } summary { cursor: pointer; color: var(--muted); }
    figure.diagram { margin: .5rem 0; overflow-x: auto; border: 1px solid var(--line); border-radius: 6px;
      padding: .5rem; background: #fff; }
    figure.diagram svg { max-width: 100%; height: auto; }
    footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
    @media (max-width: 40rem) {
      body { padding: .75rem; font-size: 15px; }
      h1 { font-size: 1.3rem; }
      dl.summary { grid-template-columns: 1fr; }
      dl.summary dd { margin-bottom: .4rem; }
      nav ol { columns: 1; }
      table { font-size: .85rem; }
      th, td { padding: .25rem .4rem; }
      figure.diagram svg { max-width: none; width: 40rem; }
    }
    @media print {
      body { max-width: none; padding: 0; font-size: 11pt; }
      nav, summary { display: none; }
      details > * { display: block; }
      a { color: inherit; text-decoration: none; }
      section.step { break-before: page; }
      table, figure, li { break-inside: avoid; }
      figure.diagram { overflow: visible; border: none; }
      .table { overflow: visible; }
    }
    """
}
