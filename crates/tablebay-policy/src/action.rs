//! The actions a policy can grant: every `oss:*` action of the OSS Tables product list (≡ `s3tables:*`), with the
//! guide's "may be granted across accounts" mark, and the two STS actions that trust and identity policies name.
//!
//! Names are matched case-insensitively, as IAM does; `oss:`, `s3tables:` and `osstables:` (ossutil's examples)
//! are three spellings of one service.

/// The service an action belongs to, which decides the prefixes that name it in a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Service {
    /// The table service: `oss:`, `s3tables:` or `osstables:`.
    Tables,
    /// The token service: `sts:`.
    Sts,
}

impl Service {
    /// The prefixes (lower case) that name this service in an `Action` element.
    pub fn prefixes(self) -> &'static [&'static str] {
        match self {
            Service::Tables => &["oss", "s3tables", "osstables"],
            Service::Sts => &["sts"],
        }
    }

    /// The service a prefix names, case-insensitively.
    pub fn from_prefix(prefix: &str) -> Option<Service> {
        [Service::Tables, Service::Sts]
            .into_iter()
            .find(|s| s.prefixes().iter().any(|p| p.eq_ignore_ascii_case(prefix)))
    }
}

macro_rules! actions {
    ($( $(#[$doc:meta])* $variant:ident = $cross:literal ),* $(,)?) => {
        /// One action of the table service, as the product guide lists it (plus `GetTableMaintenanceJobStatus`,
        /// which OSS implements and AWS names, and the three record-expiration actions AWS names), or an STS
        /// action.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Action {
            $( $(#[$doc])* $variant, )*
            /// `sts:AssumeRole`: named by trust policies and by the caller's identity policy.
            AssumeRole,
            /// `sts:GetSessionToken`.
            GetSessionToken,
        }

        const TABLE_ACTIONS: &[Action] = &[ $( Action::$variant, )* ];
        const ALL_ACTIONS: &[Action] = &[ $( Action::$variant, )* Action::AssumeRole, Action::GetSessionToken ];

        impl Action {
            /// The action's name without its service prefix (`"CreateTable"`).
            pub fn name(&self) -> &'static str {
                match self {
                    $( Action::$variant => stringify!($variant), )*
                    Action::AssumeRole => "AssumeRole",
                    Action::GetSessionToken => "GetSessionToken",
                }
            }

            /// Whether a resource policy may grant the action to another account (the guide's "跨账号访问" column).
            /// An allow for an action that is not cross-account has no effect across accounts.
            pub fn cross_account(&self) -> bool {
                match self {
                    $( Action::$variant => $cross, )*
                    Action::AssumeRole => true,
                    Action::GetSessionToken => false,
                }
            }
        }
    };
}

actions! {
    // Table bucket level.
    /// `oss:CreateTableBucket`.
    CreateTableBucket = false,
    /// `oss:GetTableBucket` (also Iceberg `getConfig`).
    GetTableBucket = true,
    /// `oss:ListTableBuckets`.
    ListTableBuckets = false,
    /// `oss:CreateNamespace`.
    CreateNamespace = true,
    /// `oss:GetNamespace`.
    GetNamespace = true,
    /// `oss:ListNamespaces`.
    ListNamespaces = true,
    /// `oss:DeleteNamespace`.
    DeleteNamespace = true,
    /// `oss:DeleteTableBucket`.
    DeleteTableBucket = true,
    /// `oss:PutTableBucketPolicy`.
    PutTableBucketPolicy = false,
    /// `oss:GetTableBucketPolicy`.
    GetTableBucketPolicy = false,
    /// `oss:DeleteTableBucketPolicy`.
    DeleteTableBucketPolicy = false,
    /// `oss:GetTableBucketMaintenanceConfiguration`.
    GetTableBucketMaintenanceConfiguration = true,
    /// `oss:PutTableBucketMaintenanceConfiguration`.
    PutTableBucketMaintenanceConfiguration = true,
    /// `oss:PutTableBucketEncryption`.
    PutTableBucketEncryption = false,
    /// `oss:GetTableBucketEncryption`.
    GetTableBucketEncryption = false,
    /// `oss:DeleteTableBucketEncryption`.
    DeleteTableBucketEncryption = false,
    /// `s3tables:PutTableBucketLogging` (AWS's name; not in the OSS guide's list): owner-only, like encryption.
    PutTableBucketLogging = false,
    /// `s3tables:GetTableBucketLogging` (AWS's name; not in the OSS guide's list).
    GetTableBucketLogging = false,
    // Table level.
    /// `oss:GetTableMaintenanceConfiguration`.
    GetTableMaintenanceConfiguration = true,
    /// `oss:PutTableMaintenanceConfiguration`.
    PutTableMaintenanceConfiguration = true,
    /// `oss:GetTableMaintenanceJobStatus`: not in the guide's list; treated like the maintenance reads.
    GetTableMaintenanceJobStatus = true,
    /// `s3tables:GetTableRecordExpirationConfiguration` (AWS's name; not in the OSS guide's list).
    GetTableRecordExpirationConfiguration = true,
    /// `s3tables:PutTableRecordExpirationConfiguration` (AWS's name; not in the OSS guide's list).
    PutTableRecordExpirationConfiguration = true,
    /// `s3tables:GetTableRecordExpirationJobStatus` (AWS's name; not in the OSS guide's list).
    GetTableRecordExpirationJobStatus = true,
    // Replication (AWS's names; not in the OSS guide's list). The configuration reads and writes are the owner's
    // alone, like the policy and encryption settings; the status read and disassociating a replica may be granted
    // across accounts (a replica often lives in another account than its source).
    /// `s3tables:PutTableBucketReplication`.
    PutTableBucketReplication = false,
    /// `s3tables:GetTableBucketReplication`.
    GetTableBucketReplication = false,
    /// `s3tables:DeleteTableBucketReplication`.
    DeleteTableBucketReplication = false,
    /// `s3tables:PutTableReplication`.
    PutTableReplication = false,
    /// `s3tables:GetTableReplication`.
    GetTableReplication = false,
    /// `s3tables:DeleteTableReplication`.
    DeleteTableReplication = false,
    /// `s3tables:GetTableReplicationStatus`.
    GetTableReplicationStatus = true,
    /// `s3tables:DisassociateTableReplication`.
    DisassociateTableReplication = true,
    /// `oss:PutTablePolicy`.
    PutTablePolicy = false,
    /// `oss:GetTablePolicy`.
    GetTablePolicy = false,
    /// `oss:DeleteTablePolicy`.
    DeleteTablePolicy = false,
    /// `oss:CreateTable`.
    CreateTable = true,
    /// `oss:GetTable`.
    GetTable = true,
    /// `oss:GetTableMetadataLocation`.
    GetTableMetadataLocation = true,
    /// `oss:ListTables`.
    ListTables = true,
    /// `oss:RenameTable`.
    RenameTable = true,
    /// `oss:UpdateTableMetadataLocation`.
    UpdateTableMetadataLocation = true,
    /// `s3tables:StartTableMigration` (AWS's model; not in the OSS guide).
    StartTableMigration = false,
    /// `s3tables:SyncTableMigration`.
    SyncTableMigration = false,
    /// `s3tables:UpdateTableMigration`.
    UpdateTableMigration = false,
    /// `s3tables:CompleteTableMigration`.
    CompleteTableMigration = false,
    /// `s3tables:GetTableMigration`.
    GetTableMigration = false,
    /// `s3tables:ListTableMigrations`.
    ListTableMigrations = false,
    /// `oss:GetTableData`: reading table files (data plane, Iceberg `loadTable`).
    GetTableData = true,
    /// `oss:PutTableData`: writing table files (data plane, Iceberg `createTable`/`updateTable`).
    PutTableData = true,
    /// `oss:GetTableEncryption`.
    GetTableEncryption = false,
    /// `oss:PutTableEncryption`: CreateTable with an `encryptionConfiguration`.
    PutTableEncryption = false,
    /// `oss:DeleteTable`.
    DeleteTable = true,
}

impl Action {
    /// Parses `"<service>:<Name>"` (`oss:`, `s3tables:`, `osstables:`, `sts:`), case-insensitively; no wildcards.
    pub fn parse(name: &str) -> Option<Action> {
        let (prefix, rest) = name.split_once(':')?;
        let service = Service::from_prefix(prefix)?;
        ALL_ACTIONS
            .iter()
            .copied()
            .find(|a| a.service() == service && a.name().eq_ignore_ascii_case(rest))
    }

    /// The service the action belongs to.
    pub fn service(&self) -> Service {
        match self {
            Action::AssumeRole | Action::GetSessionToken => Service::Sts,
            _ => Service::Tables,
        }
    }

    /// Every table-service action: the guide's list, `GetTableMaintenanceJobStatus` and the record-expiration
    /// actions, in the guide's order.
    pub fn all() -> &'static [Action] {
        TABLE_ACTIONS
    }

    /// Every action a policy may name, the STS ones included.
    pub fn every() -> &'static [Action] {
        ALL_ACTIONS
    }

    /// The canonical `oss:`/`sts:` spelling (`"oss:CreateTable"`).
    pub fn qualified_name(&self) -> String {
        match self.service() {
            Service::Tables => format!("oss:{}", self.name()),
            Service::Sts => format!("sts:{}", self.name()),
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.qualified_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guide's table, transcribed: name and whether it may be granted across accounts.
    const GUIDE: &[(&str, bool)] = &[
        ("CreateTableBucket", false),
        ("GetTableBucket", true),
        ("ListTableBuckets", false),
        ("CreateNamespace", true),
        ("GetNamespace", true),
        ("ListNamespaces", true),
        ("DeleteNamespace", true),
        ("DeleteTableBucket", true),
        ("PutTableBucketPolicy", false),
        ("GetTableBucketPolicy", false),
        ("DeleteTableBucketPolicy", false),
        ("GetTableBucketMaintenanceConfiguration", true),
        ("PutTableBucketMaintenanceConfiguration", true),
        ("PutTableBucketEncryption", false),
        ("GetTableBucketEncryption", false),
        ("DeleteTableBucketEncryption", false),
        ("GetTableMaintenanceConfiguration", true),
        ("PutTableMaintenanceConfiguration", true),
        ("PutTablePolicy", false),
        ("GetTablePolicy", false),
        ("DeleteTablePolicy", false),
        ("CreateTable", true),
        ("GetTable", true),
        ("GetTableMetadataLocation", true),
        ("ListTables", true),
        ("RenameTable", true),
        ("UpdateTableMetadataLocation", true),
        ("GetTableData", true),
        ("PutTableData", true),
        ("GetTableEncryption", false),
        ("PutTableEncryption", false),
        ("DeleteTable", true),
    ];

    /// Actions AWS's model names that the guide's table does not list, with the cross-account mark of their
    /// nearest guide action (the maintenance configuration reads and writes).
    const AWS_ONLY: &[(&str, bool)] = &[
        ("GetTableMaintenanceJobStatus", true),
        ("GetTableRecordExpirationConfiguration", true),
        ("PutTableRecordExpirationConfiguration", true),
        ("GetTableRecordExpirationJobStatus", true),
        ("PutTableBucketReplication", false),
        ("GetTableBucketReplication", false),
        ("DeleteTableBucketReplication", false),
        ("PutTableReplication", false),
        ("GetTableReplication", false),
        ("DeleteTableReplication", false),
        ("GetTableReplicationStatus", true),
        ("DisassociateTableReplication", true),
        ("StartTableMigration", false),
        ("SyncTableMigration", false),
        ("UpdateTableMigration", false),
        ("CompleteTableMigration", false),
        ("GetTableMigration", false),
        ("ListTableMigrations", false),
        ("PutTableBucketLogging", false),
        ("GetTableBucketLogging", false),
    ];

    #[test]
    fn every_guide_action_parses_in_every_spelling_with_its_cross_account_mark() {
        for (name, cross) in GUIDE {
            for prefix in ["oss", "s3tables", "osstables", "OSS", "S3Tables"] {
                let action = Action::parse(&format!("{prefix}:{name}"))
                    .unwrap_or_else(|| panic!("{prefix}:{name}"));
                assert_eq!(action.name(), *name);
                assert_eq!(action.cross_account(), *cross, "{name}");
                assert_eq!(
                    Action::parse(&format!("{prefix}:{}", name.to_lowercase())),
                    Some(action)
                );
            }
        }
        // all() is the guide's list plus the actions AWS names beyond it, nothing else.
        assert_eq!(Action::all().len(), GUIDE.len() + AWS_ONLY.len());
        for action in Action::all() {
            assert!(
                GUIDE.iter().any(|(n, _)| *n == action.name())
                    || AWS_ONLY.iter().any(|(n, _)| *n == action.name()),
                "{action}"
            );
        }
        for (name, cross) in AWS_ONLY {
            let action = Action::parse(&format!("s3tables:{name}")).unwrap();
            assert_eq!(action.cross_account(), *cross, "{name}");
        }
    }

    #[test]
    fn bad_action_names() {
        for name in [
            "CreateTable",
            "oss:",
            "oss:CreateTables",
            "s3:CreateTable",
            "sts:CreateTable",
            "oss:AssumeRole",
            "oss:*",
            ":CreateTable",
            "oss:Create*",
        ] {
            assert_eq!(Action::parse(name), None, "{name}");
        }
        assert_eq!(Action::parse("sts:assumerole"), Some(Action::AssumeRole));
        assert_eq!(Action::AssumeRole.to_string(), "sts:AssumeRole");
        assert_eq!(Action::CreateTable.to_string(), "oss:CreateTable");
    }
}
