// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "migrun",
  platforms: [.macOS(.v13)],
  products: [
    .library(name: "MigrunKit", targets: ["MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit"]),
    // Lua from Swift: mapping files, policies, stages and merge rules (needs liblua5.4 on the system).
    .library(name: "MigrunScripting", targets: ["MigrunScripting"]),
    .executable(name: "migrun", targets: ["MigrunCLI"]),
    .executable(name: "migrun-bench", targets: ["MigrunBench"]),
    .executable(name: "migrun-fuzz", targets: ["MigrunFuzz"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    // .migrun.yml, the project file (a maintained YAML parser, not our own).
    .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    // SwiftData models read from their Swift sources with Apple's own parser, not patterns.
    .package(url: "https://github.com/swiftlang/swift-syntax.git", from: "603.0.1"),
    // Property tests (tests only): random predicates over random objects, SQL against the judge.
    .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
  ],
  targets: [
    .systemLibrary(name: "CLua", pkgConfig: "lua5.4", providers: [.apt(["liblua5.4-dev"])]),
    // The row loop (rows.c) drives SQLite statements the host prepared: the same system libsqlite3 as GRDB's.
    .target(
      name: "CLuaShim", dependencies: ["CLua"], cSettings: [.unsafeFlags(["-Wall", "-Wextra"])],
      linkerSettings: [.linkedLibrary("sqlite3")]),
    // The doors every file from outside comes in by (InputFile) and every input is remembered at (ReadFiles).
    .target(name: "FileDoors"),
    .target(name: "PropertyList"),
    .target(name: "LuaHost", dependencies: ["CLuaShim", "PropertyList", "FileDoors"]),
    .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
    // SQLite's process-wide settings (sqlite3_config, which Swift cannot call): the store layer's.
    .target(name: "CSQLiteSetup", linkerSettings: [.linkedLibrary("sqlite3")]),
    // The layers, each knowing only those below it (docs/design.md): the object model (entities,
    // hashes, model files and archives) knows no store; the store (SQLite layout, reading, writing,
    // files, checks) knows no context or migration; contexts, then migration, sit above it.
    .target(
      name: "MigrunModel",
      dependencies: ["PropertyList", "FileDoors", "CZlib", .product(name: "Crypto", package: "swift-crypto")]),
    .target(
      name: "MigrunStore",
      dependencies: [
        "MigrunModel", "PropertyList", "CSQLiteSetup", .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "GRDBSQLite", package: "GRDB.swift"),
      ]),
    .target(name: "MigrunContext", dependencies: ["MigrunModel", "MigrunStore"]),
    // Migration decides what to do and asks the store layer to do it: no SQLite of its own (no GRDB).
    .target(name: "MigrunKit", dependencies: ["MigrunModel", "MigrunStore", "MigrunContext", "PropertyList"]),
    .target(
      name: "MigrunScripting",
      dependencies: ["MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit", "LuaHost"]),
    // Tools that run whole jobs (fleets, diagrams, verify): above scripting, below the command line.
    .target(
      name: "MigrunTools",
      dependencies: [
        "MigrunScripting", "LuaHost", "SwiftDataModel", "PropertyList", .product(name: "Yams", package: "Yams"),
        // `migrun port` reads policy classes and stages with the same parser as SwiftData's models.
        .product(name: "SwiftSyntax", package: "swift-syntax"),
      ], plugins: ["BuildCommit"]),
    // The commit of the checkout built, for `migrun --version` (read by `git` at build time, no network).
    .plugin(name: "BuildCommit", capability: .buildTool()),
    // A target of its own, so that the core does not wait on swift-syntax's build.
    .target(
      name: "SwiftDataModel",
      dependencies: [
        "MigrunModel", "MigrunStore", .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftParser", package: "swift-syntax"),
        .product(name: "SwiftOperators", package: "swift-syntax"),
      ]),
    .executableTarget(
      name: "MigrunCLI",
      dependencies: [
        "MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit", "MigrunScripting", "MigrunTools", "LuaHost",
        "SwiftDataModel", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Yams", package: "Yams"),
      ]
    ),
    .target(
      name: "FuzzTargets",
      dependencies: [
        "MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit", "MigrunScripting", "LuaHost", "PropertyList",
        "SwiftDataModel", "MigrunTools",
        .product(name: "GRDB", package: "GRDB.swift"),
      ]
    ),
    // Replays inputs normally; scripts/fuzz builds it with libFuzzer (which brings its own main).
    .executableTarget(
      name: "MigrunFuzz", dependencies: ["FuzzTargets"], swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    .executableTarget(
      name: "MigrunBench",
      dependencies: [
        "LuaHost", "MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit", "MigrunScripting",
        .product(name: "GRDB", package: "GRDB.swift"),
      ],
      path: "Benchmarks/MigrunBench"),
    .target(
      name: "TestSupport",
      dependencies: ["MigrunModel", "MigrunStore", "MigrunKit", .product(name: "GRDB", package: "GRDB.swift")],
      path: "Tests/TestSupport"),
    .testTarget(
      name: "MigrunKitTests",
      dependencies: [
        "MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit", "PropertyList", "TestSupport",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]),
    .testTarget(name: "LuaHostTests", dependencies: ["LuaHost", "TestSupport"]),
    // The library as a Swift program uses it: the public modules of the two library products only.
    .testTarget(
      name: "MigrunAPITests",
      dependencies: ["MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit", "MigrunScripting", "TestSupport"]),
    .testTarget(
      name: "MigrunScriptingTests",
      dependencies: [
        "MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit", "MigrunScripting", "MigrunTools", "LuaHost",
        "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
      ]),
    .testTarget(name: "PropertyListTests", dependencies: ["PropertyList", "TestSupport"]),
    // The tools layer's jobs as values (exit statuses, the project file, reports), without the command line.
    .testTarget(
      name: "MigrunToolsTests",
      dependencies: [
        "MigrunTools", "MigrunModel", "MigrunStore", "MigrunContext", "MigrunKit", "MigrunScripting", "LuaHost",
        "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
      ]),
    .testTarget(
      name: "SwiftDataModelTests",
      dependencies: ["SwiftDataModel", "MigrunModel", "MigrunStore", "MigrunKit", "TestSupport"]),
    .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets", "PropertyList", "TestSupport"]),
    .testTarget(
      name: "MigrunCLITests",
      dependencies: [
        "MigrunCLI", "MigrunModel", "MigrunStore", "MigrunKit", "PropertyList", "TestSupport",
        .product(name: "GRDB", package: "GRDB.swift"),
      ]),
  ],
  swiftLanguageModes: [.v6]
)
