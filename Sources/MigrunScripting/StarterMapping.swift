import Foundation
import MigrunKit
import MigrunModel

/// A mapping file to start from (`migrun diff --lua`), as Xcode starts a new mapping model filled
/// with what it infers: every entity mapping, attribute and relationship of the inferred step spelled
/// out, with where each comes from. Run as it is written, it does what the inferred step does; where
/// nothing can be inferred, the entry is a function that fails the step with what is to be written.
package enum StarterMapping {
  package static func lua(source: ObjectModel, destination: ObjectModel, from: String, to: String) -> String {
    var writer = Writer(source: source, destination: destination)
    return writer.write(from: from, to: to)
  }

  /// The file's name for the step: `<From>-<To>.lua`.
  package static func fileName(from: String, to: String) -> String { "\(from)-\(to).lua" }

  private struct Writer {
    let source: ObjectModel
    let destination: ObjectModel
    var lines: [String] = []
    var unresolved = 0

    init(source: ObjectModel, destination: ObjectModel) {
      self.source = source
      self.destination = destination
    }

    mutating func write(from: String, to: String) -> String {
      var body: [String] = []
      var mapped = Set<String>()
      for entity in destination.entities.sorted(by: { $0.name < $1.name }) {
        let origin: Entity?
        do {
          origin = try MappingModel.match(entity, in: source)
        } catch {
          body += ["  \(key(entity.name)) = {", "    kind = \"add\", -- \(error.reason): set from = \"…\"", "  },"]
          continue
        }
        guard let origin else {
          body += [
            "  -- AddDestination \(entity.name): a new entity, no source objects.", "  \(key(entity.name)) = \"add\",",
          ]
          continue
        }
        mapped.insert(origin.name)
        if origin.isAbstract {
          body.append("  -- \(entity.name): abstract, continues \(origin.name); its subentities carry the objects.")
          continue
        }
        body += entry(entity, from: origin)
      }
      for entity in source.entities.sorted(by: { $0.name < $1.name })
      where !mapped.contains(entity.name) && !entity.isAbstract {
        if destination.entity(named: entity.name) == nil {
          body += [
            "  -- RemoveSource \(entity.name): not in \(to); its objects are not migrated.",
            "  \(key(entity.name)) = \"remove\",",
          ]
        } else {
          body.append("  -- \(entity.name): its objects are not migrated (another entity took its name).")
        }
      }
      lines = [
        "-- \(from) → \(to): a mapping file to start from, written by `migrun diff --from \(lua(from)) --to \(lua(to)) --lua`.",
        "-- Every entity mapping, attribute and relationship of the step Core Data would infer is spelled out,",
        "-- with where it comes from; run as it is, it does what the inferred step does. Edit what should differ:",
        "-- an attribute is a source attribute's name (carried as Core Data carries it: converted, defaulted)",
        "-- or a function(src, m) returning the value; see docs/policies.md, \"Writing a mapping file\".",
      ]
      if unresolved > 0 {
        lines.append(
          "-- \(unresolved) value(s) cannot be inferred: their functions fail the step until they are written (search \"error(\")."
        )
      }
      lines += ["", "return {"] + body + ["}"]
      return lines.joined(separator: "\n") + "\n"
    }

    mutating func entry(_ entity: Entity, from origin: Entity) -> [String] {
      let name = EntityMapping.name(source: origin.name, destination: entity.name)
      var out = [
        "  -- \(name)\(origin.name == entity.name ? "" : ": \(entity.name) was \(origin.name)")",
        "  \(key(entity.name)) = {",
      ]
      out.append("    from = \(lua(origin.name)),")
      out += attributesTable(entity, from: origin)
      let (relationshipLines, unfilled) = relationshipsTable(entity, from: origin)
      out += relationshipLines
      if !unfilled.isEmpty {
        unresolved += 1
        let message = "\(entity.name): fill the new required relationship(s) \(unfilled.joined(separator: ", "))"
        out += [
          "    createRelationships = function(dst, m)",
          "      error(\(lua(message)))",
          "    end,",
        ]
      }
      out.append("  },")
      return out
    }

    /// The entry's `attributes` table: each destination attribute's source, as inference would take
    /// it (a comment says how), a failing placeholder where none can be inferred.
    mutating func attributesTable(_ entity: Entity, from origin: Entity) -> [String] {
      var out: [String] = []
      let sourceAttributes = source.attributes(of: origin).filter { !$0.isTransient }
      var used = Set<String>()
      var attributeLines: [String] = []
      for attribute in destination.attributes(of: entity).sorted(by: { $0.name < $1.name }) where !attribute.isTransient
      {
        let old = MappingModel.continued(attribute, in: sourceAttributes)
        if let old { used.insert(old.name) }
        let field = "\(key(attribute.name)) = "
        do {
          let made = try MappingModel.attributeSource(for: attribute, continuing: old, in: entity.name)
          switch made {
          case .property(let from):
            attributeLines.append(
              "      \(field)\(lua(from)),\(from == attribute.name ? " -- copied" : " -- renamed: was \(from)")")
          case .propertyOrDefault(let from, let fallback):
            attributeLines.append(
              "      \(field)\(lua(from)), -- \(from == attribute.name ? "" : "was \(from); ")now required: NULL becomes \(literal(fallback))"
            )
          case .converted(let from, let conversion, let fallback):
            attributeLines.append(
              "      \(field)\(lua(from)), -- \(from == attribute.name ? "" : "was \(from); ")converted \(conversion)\(fallback == .null ? "" : "; NULL becomes \(literal(fallback))")"
            )
          case .constant(let value):
            // Left to inference (a function would make every row go through Lua).
            attributeLines.append(
              "      -- \(field)function(src) return \(literal(value)) end, -- new: \(value == .null ? "NULL" : "its default \(literal(value))") (inferred while this stays a comment)"
            )
          case .computed:
            break
          }
        } catch {
          unresolved += 1
          attributeLines.append(
            "      \(field)function(src) error(\(lua("\(entity.name).\(attribute.name) \(error.reason)"))) end,")
        }
      }
      let dropped = sourceAttributes.map(\.name).filter { !used.contains($0) }
      if !attributeLines.isEmpty || !dropped.isEmpty {
        out.append("    attributes = {")
        out += attributeLines
        if !dropped.isEmpty {
          out.append("      -- dropped: \(dropped.sorted().joined(separator: ", ")) (not in the destination)")
        }
        out.append("    },")
      }
      return out
    }

    /// The entry's `relationships` table, and the new required relationships nothing fills.
    func relationshipsTable(_ entity: Entity, from origin: Entity) -> (lines: [String], unfilled: [String]) {
      var out: [String] = []
      let sourceRelationships = source.relationships(of: origin).filter { !$0.isTransient }
      var relationshipLines: [String] = []
      var usedRelationships = Set<String>()
      var unfilled: [String] = []
      for relationship in destination.relationships(of: entity).sorted(by: { $0.name < $1.name })
      where !relationship.isTransient {
        if let old = MappingModel.continued(relationship, in: sourceRelationships) {
          usedRelationships.insert(old.name)
          var note = old.name == relationship.name ? "copied" : "renamed: was \(old.name)"
          if old.isToMany != relationship.isToMany {
            note += old.isToMany ? "; to-many → to-one" : "; to-one → to-many"
          }
          relationshipLines.append("      \(key(relationship.name)) = \(lua(old.name)), -- \(note)")
        } else if !relationship.isOptional && (!relationship.isToMany || relationship.minCount > 0) {
          unfilled.append(relationship.name)
          relationshipLines.append(
            "      -- \(relationship.name): new and required; nothing to copy it from (see createRelationships)")
        } else {
          relationshipLines.append("      -- \(relationship.name): new, left empty")
        }
      }
      let droppedRelationships = sourceRelationships.map(\.name).filter { !usedRelationships.contains($0) }
      if !relationshipLines.isEmpty || !droppedRelationships.isEmpty {
        out.append("    relationships = {")
        out += relationshipLines
        if !droppedRelationships.isEmpty {
          out.append(
            "      -- dropped: \(droppedRelationships.sorted().joined(separator: ", ")) (not in the destination)")
        }
        out.append("    },")
      }
      return (out, unfilled)
    }

    func key(_ name: String) -> String { LuaSource.key(name) }
    func lua(_ text: String) -> String { LuaSource.string(text) }
    func literal(_ value: StoreValue) -> String { LuaSource.literal(value) }
  }
}
