//! What an action is performed on, as authorization sees it: the ARN that a policy's `Resource` matches, the
//! account that owns it, which resource policies govern it, and the names that the condition keys
//! `s3tables:namespace` and `s3tables:tableName` read.
//!
//! A table named only by its ARN ([`Resource::Table`]) is enough: the decision looks its namespace and name up
//! itself when a policy reads them, so no surface can leave those keys empty. What the decision cannot look up is
//! the namespace a bucket-level operation names (CreateNamespace, GetNamespace, DeleteNamespace, ListTables of one
//! namespace, CreateTable): the surface says it with [`Resource::in_namespace`] / [`Resource::naming_table`].

use tablebay_catalog::{
    AccountId, ArnFlavor, BucketArn, NamespaceName, Table, TableArn, TableName,
};

/// What an action is performed on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource {
    /// Account-level actions (CreateTableBucket, ListTableBuckets): `…:<account>:bucket/*`.
    Account(AccountId),
    /// A table bucket.
    Bucket(BucketArn),
    /// A table, by ARN; its namespace and name are looked up when a policy's conditions read them.
    Table(TableArn),
    /// A table of a bucket that is not resolved (yet): `<bucket ARN>/table/*`.
    AnyTable(BucketArn),
    /// `target`, within one namespace: a bucket-level operation that names a namespace (and for CreateTable a
    /// table name), or a table whose names the caller resolved already. ARN, owner and resource policies are the
    /// target's; the names fill `s3tables:namespace` and `s3tables:tableName`. Built with
    /// [`Resource::in_namespace`], [`Resource::naming_table`] or [`Resource::table`].
    InNamespace {
        /// What the action is on.
        target: Box<Resource>,
        /// The namespace (`s3tables:namespace`).
        namespace: NamespaceName,
        /// The table's name (`s3tables:tableName`), when the operation names or acts on one table.
        table: Option<TableName>,
    },
}

impl Resource {
    /// A resolved table: its ARN, with the namespace and name it has now (no lookup at decision time).
    pub fn table(table: &Table) -> Resource {
        Resource::Table(table.arn.clone()).naming_table(table.namespace.clone(), table.name.clone())
    }

    /// This resource within `namespace`: for bucket-level operations that name one (`Resource::Bucket(b)
    /// .in_namespace(ns)` for GetNamespace, DeleteNamespace, ListTables of one namespace, …). Replaces names
    /// given before.
    pub fn in_namespace(self, namespace: NamespaceName) -> Resource {
        Resource::InNamespace {
            target: Box::new(self.into_target()),
            namespace,
            table: None,
        }
    }

    /// This resource naming the table `name` of `namespace`: for CreateTable (`Resource::Bucket(b)` on the
    /// control plane, `Resource::AnyTable(b)` in the Iceberg catalog) and for a table whose names are known.
    pub fn naming_table(self, namespace: NamespaceName, name: TableName) -> Resource {
        Resource::InNamespace {
            target: Box::new(self.into_target()),
            namespace,
            table: Some(name),
        }
    }

    /// What the action is on, without the names around it.
    pub fn target(&self) -> &Resource {
        match self {
            Self::InNamespace { target, .. } => target.target(),
            other => other,
        }
    }

    fn into_target(self) -> Resource {
        match self {
            Self::InNamespace { target, .. } => target.into_target(),
            other => other,
        }
    }

    /// The namespace and table name the resource was given, if any.
    pub fn names(&self) -> Option<(&NamespaceName, Option<&TableName>)> {
        match self {
            Self::InNamespace {
                namespace, table, ..
            } => Some((namespace, table.as_ref())),
            _ => None,
        }
    }

    /// The resource's ARN as policies match it.
    pub fn arn(&self, region: &str, flavor: ArnFlavor) -> String {
        match self {
            Self::Account(account) => format!("{}{region}:{account}:bucket/*", flavor.tables()),
            Self::Bucket(bucket) => bucket.clone().with_flavor(flavor).to_string(),
            Self::Table(table) => {
                let mut table = table.clone();
                table.bucket = table.bucket.with_flavor(flavor);
                table.to_string()
            }
            Self::AnyTable(bucket) => format!("{}/table/*", bucket.clone().with_flavor(flavor)),
            Self::InNamespace { target, .. } => target.arn(region, flavor),
        }
    }

    /// The account that owns the resource.
    pub fn account(&self) -> &AccountId {
        match self {
            Self::Account(account) => account,
            Self::Bucket(bucket) | Self::AnyTable(bucket) => &bucket.account,
            Self::Table(table) => &table.bucket.account,
            Self::InNamespace { target, .. } => target.account(),
        }
    }

    /// The bucket the resource is or lies in (none for account-level actions).
    pub fn bucket(&self) -> Option<&BucketArn> {
        match self.target() {
            Self::Account(_) => None,
            Self::Bucket(bucket) | Self::AnyTable(bucket) => Some(bucket),
            Self::Table(table) => Some(&table.bucket),
            Self::InNamespace { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tablebay_catalog::BucketName;

    fn bucket() -> BucketArn {
        BucketArn {
            flavor: ArnFlavor::Aws,
            region: "us-east-1".into(),
            account: AccountId::parse("111122223333").unwrap(),
            name: BucketName::parse("sales").unwrap(),
        }
    }

    #[test]
    fn names_wrap_without_changing_arn_or_owner() {
        let ns = NamespaceName::parse("hr").unwrap();
        let other = NamespaceName::parse("ops").unwrap();
        let name = TableName::parse("people").unwrap();
        let plain = Resource::AnyTable(bucket());
        let named = plain
            .clone()
            .in_namespace(other)
            .naming_table(ns.clone(), name.clone());
        assert_eq!(named.target(), &plain);
        assert_eq!(named.names(), Some((&ns, Some(&name))));
        for flavor in [ArnFlavor::Aws, ArnFlavor::Oss] {
            assert_eq!(
                named.arn("us-east-1", flavor),
                plain.arn("us-east-1", flavor)
            );
        }
        assert_eq!(named.account().as_str(), "111122223333");
        assert_eq!(named.bucket(), Some(&bucket()));
        assert_eq!(
            Resource::Bucket(bucket()).in_namespace(ns.clone()).names(),
            Some((&ns, None))
        );
        assert_eq!(Resource::Bucket(bucket()).names(), None);
        assert_eq!(
            Resource::Account(bucket().account).bucket(),
            None,
            "account-level actions have no bucket"
        );
    }
}
