//! Which actions each Iceberg REST operation needs: the product guide's "Iceberg REST操作与权限映射" table, plus
//! the operations the guide does not list, mapped to the nearest listed one (noted on each variant).

use crate::Action;

/// An Iceberg REST catalog operation, named as in the REST spec's `operationId`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IcebergOperation {
    /// `GET /v1/config`.
    GetConfig,
    /// `GET /v1/{prefix}/namespaces`.
    ListNamespaces,
    /// `POST /v1/{prefix}/namespaces`.
    CreateNamespace,
    /// `GET /v1/{prefix}/namespaces/{ns}` (`loadNamespaceMetadata`).
    LoadNamespace,
    /// `HEAD /v1/{prefix}/namespaces/{ns}`.
    NamespaceExists,
    /// `DELETE /v1/{prefix}/namespaces/{ns}`.
    DropNamespace,
    /// `POST /v1/{prefix}/namespaces/{ns}/properties`: not in the guide; needs `CreateNamespace` (S3 Tables has no
    /// separate action for namespace properties).
    UpdateNamespaceProperties,
    /// `GET /v1/{prefix}/namespaces/{ns}/tables`.
    ListTables,
    /// `POST /v1/{prefix}/namespaces/{ns}/tables`.
    CreateTable,
    /// `POST /v1/{prefix}/namespaces/{ns}/register`: not in the guide; needs what `createTable` needs.
    RegisterTable,
    /// `GET /v1/{prefix}/namespaces/{ns}/tables/{t}`.
    LoadTable,
    /// `GET /v1/{prefix}/namespaces/{ns}/tables/{t}/credentials`: not in the guide; needs what `loadTable` needs.
    LoadCredentials,
    /// `HEAD /v1/{prefix}/namespaces/{ns}/tables/{t}`.
    TableExists,
    /// `POST /v1/{prefix}/namespaces/{ns}/tables/{t}` (a commit).
    UpdateTable,
    /// `POST /v1/{prefix}/transactions/commit`: not in the guide; needs what `updateTable` needs, per table.
    CommitTransaction,
    /// `DELETE /v1/{prefix}/namespaces/{ns}/tables/{t}`.
    DropTable,
    /// `POST /v1/{prefix}/tables/rename`.
    RenameTable,
    /// `POST /v1/{prefix}/namespaces/{ns}/tables/{t}/unregister`: not in the guide; the catalog forgets the table
    /// as `dropTable` does (`DeleteTable`) and answers its metadata as `loadTable` does
    /// (`GetTableMetadataLocation`).
    UnregisterTable,
    /// `POST /v1/{prefix}/namespaces/{ns}/register-view`: not in the guide; needs what `registerTable` needs (the
    /// view adopts a table's storage).
    RegisterView,
}

impl IcebergOperation {
    /// Every operation, for table-driven tests.
    pub fn all() -> &'static [IcebergOperation] {
        use IcebergOperation::*;
        &[
            GetConfig,
            ListNamespaces,
            CreateNamespace,
            LoadNamespace,
            NamespaceExists,
            DropNamespace,
            UpdateNamespaceProperties,
            ListTables,
            CreateTable,
            RegisterTable,
            LoadTable,
            LoadCredentials,
            TableExists,
            UpdateTable,
            CommitTransaction,
            DropTable,
            RenameTable,
            UnregisterTable,
            RegisterView,
        ]
    }

    /// Whether the product guide lists this operation (the others are mapped by analogy).
    pub fn in_guide(&self) -> bool {
        use IcebergOperation::*;
        !matches!(
            self,
            UpdateNamespaceProperties
                | RegisterTable
                | LoadCredentials
                | CommitTransaction
                | UnregisterTable
                | RegisterView
        )
    }
}

/// The actions an Iceberg REST operation needs, all of them on the operation's resource (the table for table
/// operations, the bucket otherwise).
pub fn iceberg_operation_actions(op: IcebergOperation) -> &'static [Action] {
    use Action as A;
    use IcebergOperation as O;
    match op {
        O::GetConfig => &[A::GetTableBucket],
        O::ListNamespaces => &[A::ListNamespaces],
        O::CreateNamespace | O::UpdateNamespaceProperties => &[A::CreateNamespace],
        O::LoadNamespace | O::NamespaceExists => &[A::GetNamespace],
        O::DropNamespace => &[A::DeleteNamespace],
        O::ListTables => &[A::ListTables],
        O::CreateTable | O::RegisterTable | O::RegisterView => &[A::CreateTable, A::PutTableData],
        O::LoadTable | O::LoadCredentials => &[A::GetTableMetadataLocation, A::GetTableData],
        O::UpdateTable | O::CommitTransaction => &[
            A::UpdateTableMetadataLocation,
            A::PutTableData,
            A::GetTableData,
        ],
        O::DropTable => &[A::DeleteTable],
        O::UnregisterTable => &[A::DeleteTable, A::GetTableMetadataLocation],
        O::RenameTable => &[A::RenameTable],
        O::TableExists => &[A::GetTable],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guides_map() {
        // Transcribed from the guide: operationId → required actions.
        let guide: &[(IcebergOperation, &[&str])] = &[
            (IcebergOperation::GetConfig, &["oss:GetTableBucket"]),
            (IcebergOperation::ListNamespaces, &["oss:ListNamespaces"]),
            (IcebergOperation::CreateNamespace, &["oss:CreateNamespace"]),
            (IcebergOperation::LoadNamespace, &["oss:GetNamespace"]),
            (IcebergOperation::DropNamespace, &["oss:DeleteNamespace"]),
            (IcebergOperation::ListTables, &["oss:ListTables"]),
            (
                IcebergOperation::CreateTable,
                &["oss:CreateTable", "oss:PutTableData"],
            ),
            (
                IcebergOperation::LoadTable,
                &["oss:GetTableMetadataLocation", "oss:GetTableData"],
            ),
            (
                IcebergOperation::UpdateTable,
                &[
                    "oss:UpdateTableMetadataLocation",
                    "oss:PutTableData",
                    "oss:GetTableData",
                ],
            ),
            (IcebergOperation::DropTable, &["oss:DeleteTable"]),
            (IcebergOperation::RenameTable, &["oss:RenameTable"]),
            (IcebergOperation::TableExists, &["oss:GetTable"]),
            (IcebergOperation::NamespaceExists, &["oss:GetNamespace"]),
        ];
        for (op, names) in guide {
            let want: Vec<Action> = names.iter().map(|n| Action::parse(n).unwrap()).collect();
            assert_eq!(iceberg_operation_actions(*op), want.as_slice(), "{op:?}");
            assert!(op.in_guide());
        }
        assert_eq!(
            IcebergOperation::all()
                .iter()
                .filter(|o| o.in_guide())
                .count(),
            guide.len()
        );
    }
}
