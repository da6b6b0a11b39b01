/// The LDS1 eMRTD application's identifiers (ICAO 9303-10 §4.6–4.7): its AID, and the data groups' application
/// tags and file identifiers.
public enum LDSTags {
    /// The eMRTD (LDS1) application identifier A0 00 00 02 47 10 01 (ICAO 9303-10 §4.1).
    public static let applicationIdentifier: [UInt8] = [0xA0, 0x00, 0x00, 0x02, 0x47, 0x10, 0x01]

    /// Data group number → its application tag (Table 35): DG1 61, DG2 75, …, DG16 70.
    public static let dataGroups: [Int: UInt8] = [
        1: 0x61, 2: 0x75, 3: 0x63, 4: 0x76, 5: 0x65, 6: 0x66, 7: 0x67, 8: 0x68,
        9: 0x69, 10: 0x6A, 11: 0x6B, 12: 0x6C, 13: 0x6D, 14: 0x6E, 15: 0x6F, 16: 0x70,
    ]

    /// The data group whose tag is `tag` (EF.COM's tag list), or nil.
    public static func dataGroup(forTag tag: UInt8) -> Int? { dataGroups.first { $0.value == tag }?.key }

    /// EF.COM's data-group list (ICAO 9303-10 §4.6.1: 60 { 5F01 LDS version, 5F36 Unicode version, 5C tags }),
    /// ascending; unknown tags are skipped.
    public static func dataGroupsListed(inCOM bytes: [UInt8]) throws -> [Int] {
        let root = try SecurityInfoError.reading { try SecurityInfos.leadingElement(bytes) }
        guard root.tag.raw == 0x60 else { throw SecurityInfoError.invalid("EF.COM starts with tag \(root.tag), not 60") }
        guard let list = try SecurityInfoError.reading({ try root.child(BERTag(0x5C)) }) else { throw SecurityInfoError.invalid("EF.COM has no tag list (5C)") }
        return Array(Set(list.value.compactMap(dataGroup(forTag:)))).sorted()
    }
}
