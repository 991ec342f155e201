import MigrunModel

/// The two orders Core Data's SQL depends on beyond names: the order entities are numbered in, and
/// the order a table's columns are written in its `CREATE TABLE`. One home for both: the builder
/// lays out every table with them, and every path that makes a table (create, the steps, salvage,
/// copy, convert, import) takes its statement from the layout.
extension StoreSchema {
  /// Core Data's SQL type of a column (`NSSQLColumn.sqlType`), as the public decompilation of
  /// `-[NSSQLAttribute _sqlTypeForAttributeType:flags:]` maps attribute types: Integer 16, Integer
  /// 32 and Boolean 1; Integer 64 2; Decimal 4; String (and the types with no column of their own) 6;
  /// Double and Float 7; Date 8; Binary 10, or 16 when it allows external storage; UUID 11; URI 12;
  /// Transformable 15. Keys of to-ones, their entity and order columns are integers.
  enum SQLType: Int, Sendable {
    case integer = 1
    case integer64 = 2
    case decimal = 4
    case text = 6
    case floatingPoint = 7
    case timestamp = 8
    case binary = 10
    case uuid = 11
    case uri = 12
    case transformable = 15
    case externalBinary = 16

    init(_ attribute: Attribute) {
      switch attribute.type {
      case .integer16, .integer32, .boolean: self = .integer
      case .integer64: self = .integer64
      case .decimal: self = .decimal
      case .double, .float: self = .floatingPoint
      case .date: self = .timestamp
      case .binary: self = attribute.allowsExternalBinaryDataStorage ? .externalBinary : .binary
      case .uuid: self = .uuid
      case .uri: self = .uri
      case .transformable: self = .transformable
      case .string, .objectID, .undefined, .composite: self = .text
      }
    }

    /// The type `CREATE TABLE` declares (`NSSQLiteAdapter_typeStringForSQLType`).
    var declaration: String {
      switch self {
      case .integer, .integer64: "INTEGER"
      case .decimal: "DECIMAL"
      case .text, .uri: "VARCHAR"
      case .floatingPoint: "FLOAT"
      case .timestamp: "TIMESTAMP"
      case .binary, .uuid, .transformable, .externalBinary: "BLOB"
      }
    }

    /// The column's place in `CREATE TABLE`: Core Data writes a table's columns sorted by this rank
    /// (`sortColumnsByType`, a stable sort of the root entity's columns in the order the hierarchy
    /// added them; `Z_PK`, `Z_ENT`, `Z_OPT` first). The decompilation names the rank table but not
    /// its values; these are read off the stores in `../shared` (production schemas included),
    /// where every pair of types that meet in one table is in this order:
    /// - every integer (attributes of 16, 32 and 64 bits, Booleans, keys) alike — SampleModel2's
    ///   ZBOOK: PAGESCOUNT (64 bits), AUTHOR (a key), ISBLACKANDWHITE (a subentity's Boolean);
    /// - dates and floating-point numbers alike — Moody's ZMOOD: DATE, LATITUDE, LONGITUDE,
    ///   MARKEDFORDELETIONDATE; WhatsApp's ZWAMEDIAITEM, Notes' ZICLOCATION;
    /// - then decimals (CartKit's ZCDCART, SampleModel2's ZBOOK), then text and URIs, then data:
    ///   UUIDs, then transformables (ZBOOK: UNIQUEID before COVER), then binary data (Mastodon's
    ///   ZTAG: IDENTIFIER, a UUID, before HISTORIES; Teams' ZCALEVENTDETAILS and ZSMESSAGE: every
    ///   transformable before every binary attribute, whatever their names).
    ///
    /// Guess: where no store shows two types side by side (URIs against strings, binary data that
    /// allows external storage against the rest) URIs follow strings and external data follows
    /// binary data, as their SQL type numbers run.
    var rank: Int {
      switch self {
      case .integer, .integer64: 3
      case .floatingPoint, .timestamp: 4
      case .decimal: 5
      case .text: 6
      case .uri: 7
      case .uuid: 8
      case .transformable: 9
      case .binary: 10
      case .externalBinary: 11
      }
    }
  }

  /// Core Data's order of entity names where it numbers entities: `-[NSString
  /// caseInsensitiveCompare:]` (`-[NSManagedObjectModel _sortedEntitiesForConfiguration:]` for the
  /// roots, `-[NSEntityDescription _sortedSubentities]` for each entity's subentities; public
  /// decompilation). Teams' store at framework 1145 numbers `ScheduledMemberTag` 26, `SContact` 27,
  /// `SDKSyncTask` 28, `SearchCacheResults` 29; duckduckgo's `SyncableSettingsMetadata` 1 before
  /// `SyncFeatureEntity` 2. Case is folded to lower case, so `_` (0x5F) sorts after the digits and
  /// before every letter. Guess: names equal but for case keep byte order, and a non-ASCII letter
  /// is compared by its lower-case UTF-16 code units (Foundation's full comparison also folds
  /// accents' composed and decomposed forms alike; no store we have names an entity so).
  static func numberingPrecedes(_ first: String, _ second: String) -> Bool {
    let a = first.lowercased().utf16
    let b = second.lowercased().utf16
    if a.elementsEqual(b) { return first.utf16.lexicographicallyPrecedes(second.utf16) }
    return a.lexicographicallyPrecedes(b)
  }
}
