//! Every action under every rule: identity allow, no policy, explicit deny in a bucket policy, cross-account
//! grants, account roots, sessions; a table policy's deny beats a bucket policy's allow.

use super::*;

#[test]
fn every_action_under_every_rule() {
    for &action in Action::all() {
        let name = action.name();
        let res = resource_of(action);
        let exact = |prefix: &str| format!("{prefix}:{name}");

        // Same account, identity policy allows (each spelling of the service).
        for prefix in ["oss", "s3tables", "osstables"] {
            let mut case = Case::new(user(ANA), action);
            case.identity = vec![identity(&allow(&exact(prefix), res))];
            assert_eq!(
                case.decide(),
                Decision::Allow,
                "{name}: identity allow ({prefix})"
            );
        }

        // Same account, no policy: implicit deny.
        assert_eq!(
            Case::new(user(ANA), action).decide(),
            Decision::ImplicitDeny,
            "{name}: no policy"
        );

        // An identity allow for another action does not leak.
        let mut case = Case::new(user(ANA), action);
        let other = Action::all().iter().find(|a| **a != action).unwrap();
        case.identity = vec![identity(&allow(&other.to_string(), "*"))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: allow of {other}"
        );

        // Explicit Deny in the bucket policy despite an identity allow (and despite a resource allow).
        let mut case = Case::new(user(ANA), action);
        case.identity = vec![identity(&allow("oss:*", "*"))];
        case.resource_policies = vec![
            resource(&grant("Allow", ANA, &exact("oss"), "*")),
            resource(&grant("Deny", "*", &exact("oss"), "*")),
        ];
        assert_eq!(
            case.decide(),
            Decision::ExplicitDeny {
                sid: Some("s-Deny".into())
            },
            "{name}: bucket deny"
        );

        // A Deny naming the owner account in a resource policy reaches its users too.
        let mut case = Case::new(user(ANA), action);
        case.identity = vec![identity(&allow("oss:*", "*"))];
        case.resource_policies = vec![resource(&grant("Deny", OWNER, &exact("s3tables"), res))];
        assert!(
            matches!(case.decide(), Decision::ExplicitDeny { .. }),
            "{name}: deny to account"
        );

        // Same account, a resource policy naming the user suffices without an identity policy.
        let mut case = Case::new(user(ANA), action);
        case.resource_policies = vec![resource(&grant("Allow", ANA, &exact("oss"), res))];
        assert_eq!(
            case.decide(),
            Decision::Allow,
            "{name}: resource policy names the user"
        );

        // Same account, a resource policy naming only the account delegates: the user still needs an identity allow.
        let mut case = Case::new(user(ANA), action);
        case.resource_policies = vec![resource(&grant("Allow", OWNER, &exact("oss"), res))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: resource policy names the account only"
        );

        // The account root holds every permission on its own resources.
        assert_eq!(
            Case::new(root(OWNER), action).decide(),
            Decision::Allow,
            "{name}: owner root"
        );
        // ...but not against an explicit Deny.
        let mut case = Case::new(root(OWNER), action);
        case.resource_policies = vec![resource(&grant("Deny", "*", "oss:*", "*"))];
        assert!(
            matches!(case.decide(), Decision::ExplicitDeny { .. }),
            "{name}: owner root denied"
        );

        // Across accounts: resource policy (naming the account, or the user) + identity policy, only when the
        // action is cross-account.
        let want_cross = if action.cross_account() {
            Decision::Allow
        } else {
            Decision::ImplicitDeny
        };
        for named in [
            OTHER,
            "acs:ram::444455556666:root",
            BOB,
            "acs:ram::444455556666:user/bob",
            "*",
        ] {
            let mut case = Case::new(user(BOB), action);
            case.identity = vec![identity(&allow(&exact("s3tables"), res))];
            case.resource_policies = vec![resource(&grant("Allow", named, &exact("oss"), res))];
            assert_eq!(
                case.decide(),
                want_cross,
                "{name}: cross-account, bucket policy names {named}"
            );
        }
        // Across accounts, one side alone never suffices.
        let mut case = Case::new(user(BOB), action);
        case.identity = vec![identity(&allow(&exact("oss"), "*"))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: cross-account, identity only"
        );
        let mut case = Case::new(user(BOB), action);
        case.resource_policies = vec![resource(&grant("Allow", BOB, &exact("oss"), res))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: cross-account, resource only"
        );
        // A resource policy naming a third account does not help.
        let mut case = Case::new(user(BOB), action);
        case.identity = vec![identity(&allow(&exact("oss"), "*"))];
        case.resource_policies = vec![resource(&grant(
            "Allow",
            "777788889999",
            &exact("oss"),
            res,
        ))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: third account named"
        );
        // The other account's root needs only the resource policy.
        let mut case = Case::new(root(OTHER), action);
        case.resource_policies = vec![resource(&grant("Allow", OTHER, &exact("oss"), res))];
        assert_eq!(case.decide(), want_cross, "{name}: other root");
        assert_eq!(
            Case::new(root(OTHER), action).decide(),
            Decision::ImplicitDeny,
            "{name}: other root, no policy"
        );

        // A session policy narrows: identity allows everything, the session only this action.
        let role = Caller {
            account_id: OWNER,
            arn: ROLE,
            is_account_root: false,
        };
        let mut case = Case::new(role, action);
        case.identity = vec![identity(&allow("oss:*", "*"))];
        case.session =
            Some(Policy::parse(&allow(&exact("oss"), "*"), PolicyKind::Session).unwrap());
        assert_eq!(case.decide(), Decision::Allow, "{name}: session allows");
        case.session =
            Some(Policy::parse(&allow(&other.to_string(), "*"), PolicyKind::Session).unwrap());
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: session narrows"
        );
        // ...and cannot widen.
        case.identity = vec![];
        case.session = Some(Policy::parse(&allow("oss:*", "*"), PolicyKind::Session).unwrap());
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: session cannot widen"
        );
    }
}

#[test]
fn table_policy_deny_beats_bucket_policy_allow() {
    let mut case = Case::new(user(ANA), Action::GetTableData);
    case.resource_policies = vec![
        resource(&grant("Allow", ANA, "oss:*", "*")),
        resource(&grant("Deny", ANA, "oss:GetTableData", TABLE)),
    ];
    assert!(matches!(case.decide(), Decision::ExplicitDeny { .. }));
    case.action = Action::GetTable;
    assert_eq!(case.decide(), Decision::Allow);
}
