import Foundation
import MigrunModel
import PropertyList

extension XMLStoreFile {
  /// `<databaseInfo><version>`: the same number as a binary store's database version (a guess from
  /// public copies of Apple-written files).
  static let databaseVersion = 134_481_920

  /// The text of an XML store holding `objects` (each `keys` number written as its id, `z102`) and
  /// `metadata`, in the forms ``XMLStoreFile`` reads (entity names uppercased, property names
  /// lowercased, NULL values left out — guesses until a real file confirms them).
  package static func bytes(
    of objects: [StoredObject], keys: [ObjectID: Int64], uuid: String, metadata: PropertyListValue,
    model: ObjectModel, nextObjectID: Int64
  ) throws(StoreError) -> [UInt8] {
    var text = """
      <?xml version="1.0"?>
      <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

      <database>
          <databaseInfo>
              <version>\(databaseVersion)</version>
              <UUID>\(escape(uuid))</UUID>
              <nextObjectID>\(nextObjectID)</nextObjectID>
              <metadata>\n
      """
    let plist = String(decoding: metadata.xmlEncoded(), as: UTF8.self)
    let body = plist.range(of: "<plist").map { plist[$0.lowerBound...] } ?? Substring(plist)
    for line in body.split(separator: "\n") { text += "            \(line)\n" }
    text += "        </metadata>\n    </databaseInfo>\n"
    let ordered = objects.sorted { (keys[$0.id] ?? 0) < (keys[$1.id] ?? 0) }
    for object in ordered {
      guard let key = keys[object.id], let entity = model.entity(named: object.id.entity) else { continue }
      text += "    <object type=\"\(escape(entity.name.uppercased()))\" id=\"z\(key)\">\n"
      // A composite's elements each as an attribute named by its key path (`author.person`): a guess
      // no real XML store has confirmed.
      for attribute in model.attributes(of: entity) where !attribute.isTransient {
        guard let value = object.attributes[attribute.name], value != .null else { continue }
        text +=
          "        <attribute name=\"\(escape(attribute.name.lowercased()))\" type=\"\(typeName(attribute.type))\">"
          + escape(valueText(value)) + "</attribute>\n"
      }
      for relationship in model.relationships(of: entity) where !relationship.isTransient {
        let targets =
          relationship.isToMany
          ? object.toMany[relationship.name] ?? [] : object.toOne[relationship.name].map { [$0] } ?? []
        let idrefs = targets.compactMap { keys[$0].map { "z\($0)" } }
        text +=
          "        <relationship name=\"\(escape(relationship.name.lowercased()))\" "
          + "type=\"\(relationship.minCount)/\(relationship.maxCount)\" "
          + "destination=\"\(escape(relationship.destinationEntity.uppercased()))\""
          + (idrefs.isEmpty ? "" : " idrefs=\"\(idrefs.joined(separator: " "))\"") + "></relationship>\n"
      }
      text += "    </object>\n"
    }
    text += "</database>\n"
    return Array(text.utf8)
  }

  /// The objects as an XML store can hold them: an XML store writes every value as text read back
  /// by the attribute's type, so a number a SQLite store holds as text (`"12.50"` in a Decimal
  /// column) is written as the number it reads as (what Core Data itself reads it as); text that is
  /// no number where a number belongs cannot be carried and is refused by name. Returns the objects
  /// and how many values were turned into numbers.
  package static func prepared(_ objects: [StoredObject], model: ObjectModel) throws(StoreError) -> (
    objects: [StoredObject], numbersFromText: Int
  ) {
    var changed = 0
    var prepared = objects
    for index in prepared.indices {
      guard let entity = model.entity(named: prepared[index].id.entity) else { continue }
      for attribute in model.attributes(of: entity) where !attribute.isTransient {
        guard case .string(let text)? = prepared[index].attributes[attribute.name] else { continue }
        switch attribute.type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .date, .boolean:
          guard let number = value(text, attribute.type) else {
            throw StoreError(
              .unsupportedValue, entity: entity.name, primaryKey: prepared[index].id.primaryKey,
              reason: "'\(attribute.name)' holds the text '\(text.prefix(40))' where a \(attribute.type.xmlName) "
                + "belongs: an XML store reads every value by its type, so it cannot keep it")
          }
          prepared[index].attributes[attribute.name] = number
          changed += 1
        default: continue
        }
      }
    }
    return (prepared, changed)
  }

  /// The `type` a value's element is written with (the file's own word; reading goes by the model).
  private static func typeName(_ type: AttributeType) -> String {
    switch type {
    case .integer16: "int16"
    case .integer32: "int32"
    case .integer64: "int64"
    case .decimal: "decimal"
    case .double: "double"
    case .float: "float"
    case .string: "string"
    case .boolean: "bool"
    case .date: "date"
    case .binary: "binary"
    case .uuid: "uuid"
    case .uri: "uri"
    case .transformable: "transformable"
    case .undefined, .objectID, .composite: "undefined"
    }
  }

  /// A value's text: numbers as Swift writes them exactly, dates as seconds since 2001, Booleans
  /// 0/1, data base64, UUIDs as text.
  private static func valueText(_ value: StoreValue) -> String {
    switch value {
    case .null: ""
    case .integer(let number): String(number)
    case .boolean(let flag): flag ? "1" : "0"
    case .double(let number), .date(let number): number.isNaN ? "nan" : "\(number)"
    case .string(let text): text
    case .data(let bytes): Data(bytes).base64EncodedString()
    case .uuid(let bytes):
      bytes.count == 16
        ? UUID(
          uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
            bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
          )
        ).uuidString : Data(bytes).base64EncodedString()
    }
  }

  private static func escape(_ text: String) -> String { XMLText.escaped(text) }
}
