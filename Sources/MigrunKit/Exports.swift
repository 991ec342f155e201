// `import MigrunKit` is the library's one import: the layers under migration — models, stores,
// contexts — come with it, as the product `MigrunKit` holds all four. Each module still knows only
// those below it (docs/design.md); this re-export is the product's door, not a dependency.
@_exported import MigrunContext
@_exported import MigrunModel
@_exported import MigrunStore
