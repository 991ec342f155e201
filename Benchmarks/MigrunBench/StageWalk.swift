import Foundation
import GRDB

// A stage walk as a user runs it (issue 72): `migrun migrate` with docs/policies.md's stages, default
// limits, on a store of a million objects or more. This makes the inputs; scripts/bench times the runs.

/// `stage-store COUNT FOLDER`: FOLDER/Items.xcdatamodeld (version `Items`: the items' model;
/// `Items 2` adds an optional `tag`), FOLDER/stage-COUNT.sqlite at `Items` holding COUNT items, one
/// in ten named as the item before it, and the two stages docs/policies.md documents, each in a
/// policies folder of its own: FOLDER/stage-dedupe (a walk keeping the lowest `n` of each name) and
/// FOLDER/stage-sum (a walk summing every item's price).
func stageStore(count: Int, folder: String) throws {
  let root = URL(fileURLWithPath: folder)
  let model = root.appendingPathComponent("Items.xcdatamodeld")
  try? FileManager.default.removeItem(at: model)
  let tag = #"<attribute name="tag" optional="YES" attributeType="String"/>"#
  for (version, extra) in [("Items", ""), ("Items 2", tag)] {
    let file = model.appendingPathComponent("\(version).xcdatamodel")
    try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
    try """
    <model><entity name="Item">
      <attribute name="n" attributeType="Integer 64" defaultValueString="0"/>
      <attribute name="name" optional="YES" attributeType="String"/>
      <attribute name="price" optional="YES" attributeType="Double"/>
      \(extra)
    </entity></model>
    """.write(to: file.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
  }
  try """
  <?xml version="1.0" encoding="UTF-8"?>
  <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Items 2.xcdatamodel</string></dict></plist>
  """.write(to: model.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
  let (store, url) = try itemStore(count: count, folder: folder, name: "stage-\(count)")
  try store.close()
  let queue = try DatabaseQueue(path: url.path)
  try queue.write { db in
    try db.execute(sql: "UPDATE ZITEM SET ZNAME = 'item ' || (Z_PK - 1) WHERE Z_PK % 10 = 0")
  }
  try queue.close()
  let stages = [
    "dedupe": """
    return { willMigrate = function(ctx)
      local last
      ctx:each("Item", nil, function(item)
        if item.name == last then ctx:delete(item) else last = item.name end
      end, { sort = { "name", "n" }, save = true })
    end }
    """,
    "sum": """
    return { willMigrate = function(ctx)
      local sum = 0
      ctx:each("Item", nil, function(item) sum = sum + item.price end)
      ctx:log("sum", sum)
    end }
    """,
  ]
  for (name, text) in stages {
    let policies = root.appendingPathComponent("stage-\(name)")
    try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
    try text.write(to: policies.appendingPathComponent("Items-Items 2.stage.lua"), atomically: true, encoding: .utf8)
  }
  print(url.path)
}
