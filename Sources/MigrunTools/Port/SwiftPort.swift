import Foundation
import MigrunModel
import SwiftDataModel
import SwiftSyntax

/// `migrun port`: an app's custom migration code in Swift — `NSEntityMigrationPolicy` subclasses,
/// SwiftData's `MigrationStage.custom(willMigrate:didMigrate:)` and Core Data's `NSCustomMigrationStage`
/// handlers — read with swift-syntax and written as Lua that migrun runs. Each translated statement
/// keeps its Swift line as a comment; a statement the translation does not know becomes a failing
/// placeholder (`error("migrun port: File.swift:12: …")`) that names the line and why, never a skip.
///
/// ```swift
/// let found = try SwiftPort.translate(sources: [("Policy.swift", text)])
/// found.classes.first?.module   // the Lua module: the class's hooks and functions
/// ```
package enum SwiftPort {
  /// What the sources hold, translated: classes and stages in the order the files declare them.
  package struct Translation: Sendable {
    package var classes: [PortedClass] = []
    package var stages: [PortedStage] = []
    /// `VersionedSchema` types → their `versionIdentifier` (`"V2"` → `"2.0.0"`).
    package var schemaVersions: [String: String] = [:]

    /// Every statement counted, and how many became Lua.
    package var counts: PortCounts {
      (classes.map(\.counts) + stages.map(\.counts)).reduce(PortCounts()) { $0.adding($1) }
    }
  }

  /// Translates every policy class and custom stage of `sources` (file name → text).
  package static func translate(sources: [(file: String, text: String)]) throws(ModelError) -> Translation {
    var translation = Translation()
    var trees: [(file: String, tree: SourceFileSyntax)] = []
    for source in sources {
      trees.append((source.file, try SwiftSourceText.parse(source.text, file: source.file) { $0 }))
    }
    // Every file's extensions and free functions first: a class may call one another file declares.
    let found = SwiftSourceText.onDeepStack { () -> [PortReader.Found] in
      let readers = trees.map { PortReader(file: $0.file, tree: $0.tree) }
      let helpers = HelperFunctions()
      for reader in readers { reader.collect(into: helpers) }
      return readers.map { $0.read(helpers: helpers) }
    }
    for file in found {
      translation.classes += file.classes
      translation.stages += file.stages
      translation.schemaVersions.merge(file.schemaVersions) { first, _ in first }
    }
    return translation
  }
}

/// Statements read and statements written as Lua (the rest are placeholders).
package struct PortCounts: Sendable, Equatable {
  package var statements = 0
  package var translated = 0
  package var placeholders: [PortPlaceholder] = []

  package init() {}

  package func adding(_ other: PortCounts) -> PortCounts {
    var sum = self
    sum.statements += other.statements
    sum.translated += other.translated
    sum.placeholders += other.placeholders
    return sum
  }
}

/// A Swift statement the translation left as a failing `error(…)`: where, and why.
package struct PortPlaceholder: Sendable, Equatable {
  package var spot: String
  package var reason: String
}

/// An `NSEntityMigrationPolicy` subclass as a Lua module: a table of Core Data's hooks
/// (`createDestinationInstances`, …) and of its other methods, named as a mapping model's
/// `FUNCTION($entityPolicy, "selector:", …)` calls them (`convert_withAlpha` for `convert:withAlpha:`).
package struct PortedClass: Sendable {
  package var name: String
  package var spot: String
  /// The module's text (`ClassName.lua`).
  package var module: String
  /// Core Data's hooks it overrides, as Lua names them (`finish` for `end`).
  package var hooks: [String]
  /// Its methods in the order written: hooks and functions, with what each translated.
  package var methods: [PortedMethod]
  /// Its stored properties' statements (fields of the module's table).
  package var propertyCounts: PortCounts
  package var counts: PortCounts
  /// The entity mapping its name says (`BookToBookPolicy`, `Country5ToCountry6Policy`): source and
  /// destination entity.
  package var entities: [(source: String, destination: String)]
}

extension PortedClass {
  /// Its methods other than Core Data's hooks: `(Swift signature, Lua function)`.
  package var functions: [(swift: String, lua: String)] {
    methods.filter { !$0.isHook }.map { ($0.swift, $0.lua) }
  }
}

/// A method of a policy class: its Swift signature, its Lua name, and its statements.
package struct PortedMethod: Sendable {
  package var swift: String
  package var lua: String
  package var isHook: Bool
  package var spot: String
  package var counts: PortCounts
}

/// A custom stage's handlers (`willMigrate`, `didMigrate`) as Lua functions of `ctx`.
package struct PortedStage: Sendable {
  package var spot: String
  /// What names the versions: a schema type (`V1`), or the strings a model reference holds.
  package var from: [String]
  package var to: [String]
  /// `(handler, Lua function text)` in the order `willMigrate`, `didMigrate`.
  package var handlers: [(name: String, lua: String)]
  /// The functions the handlers call, as `local function`s of the stage's file: `(Lua name, text)`.
  package var functions: [(name: String, lua: String)]
  package var counts: PortCounts
}
