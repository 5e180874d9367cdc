//! Closed sets of words in the documents (`serve`/`attach`, `completed`, `SIGTERM`, ...):
//! one enum per set whose spelling is written once, in the macro's table, and used for
//! writing, reading and `as_str` alike.

/// Declares an enum of keywords: `keywords! { pub enum Mode { Serve = "serve", ... } }`.
/// Attributes on the enum and its variants pass through (`#[derive(Default)]`,
/// `#[default]`). Reading an unknown word is an error listing the known ones.
macro_rules! keywords {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $( $(#[$vmeta])* $variant ),+ }

        impl $name {
            /// Every word of the set.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            const WORDS: &'static [&'static str] = &[$($text),+];

            /// The word as written in the documents.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The keyword a word names, if any.
            pub fn from_word(word: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|k| k.as_str() == word)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let word = <String as serde::Deserialize>::deserialize(d)?;
                $name::from_word(&word)
                    .ok_or_else(|| serde::de::Error::unknown_variant(&word, Self::WORDS))
            }
        }
    };
}

pub(crate) use keywords;
