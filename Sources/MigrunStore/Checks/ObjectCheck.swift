import MigrunModel

/// What `migrun check` would find in objects that are about to be written — links naming no object,
/// integers outside their attribute's type, required values missing — found before anything is
/// written, each named by its object and property. `import` asks it of an export's objects.
///
/// ```swift
/// if let problem = ObjectCheck.problems(in: objects, model: model).first { throw problem.error }
/// ```
package enum ObjectCheck {
  /// One object's property that a store should not hold so.
  package struct Problem: Sendable, Hashable, CustomStringConvertible {
    package var object: ObjectID
    package var property: String
    package var reason: String

    package var description: String { "\(StoreJSON.reference(object)): '\(property)' \(reason)" }

    /// The problem as a store's error (`badValue`), naming the entity, the key and the property.
    package func error(among count: Int) -> StoreError {
      let more = count > 1 ? " (and \(count - 1) more problem\(count == 2 ? "" : "s") like it)" : ""
      return StoreError(
        .badValue, entity: object.entity, primaryKey: object.primaryKey, reason: "'\(property)' \(reason)\(more)")
    }
  }

  /// Every problem of `objects` under `model`, in entity, key and property order. A link must name
  /// one of `objects`, of the relationship's destination entity or one of its subentities.
  package static func problems(in objects: [StoredObject], model: ObjectModel) -> [Problem] {
    let present = Set(objects.map(\.id))
    var found: [Problem] = []
    for object in objects.sorted(by: { ($0.id.entity, $0.id.primaryKey) < ($1.id.entity, $1.id.primaryKey) }) {
      guard let entity = model.entity(named: object.id.entity) else { continue }
      var own: [Problem] = []
      for attribute in model.declaredAttributes(of: entity) {
        for leaf in attribute.leaves where !leaf.isTransient {
          let value = object.attributes[leaf.name] ?? .null
          if let reason = problem(value, of: leaf, required: StoreCheck.requiresValue(attribute)) {
            own.append(Problem(object: object.id, property: leaf.name, reason: reason))
          }
        }
      }
      for relationship in model.relationships(of: entity) where !relationship.isTransient {
        let targets = object.toOne[relationship.name].map { [$0] } ?? object.toMany[relationship.name] ?? []
        for target in targets {
          if let reason = problem(link: target, of: relationship, present: present, model: model) {
            own.append(Problem(object: object.id, property: relationship.name, reason: reason))
            break
          }
        }
      }
      found += own.sorted { $0.property < $1.property }
    }
    return found
  }

  // MARK: - Non public

  static func problem(_ value: StoreValue, of attribute: Attribute, required: Bool) -> String? {
    if value == .null { return required ? "has no value, and the model requires one" : nil }
    guard let range = attribute.type.integerRange else { return nil }
    let outside: String
    switch value {
    case .integer(let number) where !range.contains(number): outside = String(number)
    case .double(let number) where !StoreCheck.fits(number, range): outside = String(number)
    default: return nil
    }
    return "holds \(outside), outside \(attribute.type.xmlName)'s \(range.lowerBound)…\(range.upperBound)"
  }

  static func problem(link target: ObjectID, of relationship: Relationship, present: Set<ObjectID>, model: ObjectModel)
    -> String?
  {
    guard model.entity(named: target.entity) != nil else {
      return "links to \(StoreJSON.reference(target)): the model has no entity '\(target.entity)'"
    }
    guard model.entity(named: target.entity, isKindOf: relationship.destinationEntity) else {
      return "links to \(StoreJSON.reference(target)), which is no \(relationship.destinationEntity)"
    }
    guard present.contains(target) else { return "links to \(StoreJSON.reference(target)), an object not there" }
    return nil
  }
}
